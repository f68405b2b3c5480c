// A malformed manifest.json is a located error with exit status 1, never a
// crash or an uncaught exception; the manifest is read before any device is
// opened, so this runs without a GPU.
// RUN: rm -rf %t && split-file %s %t
// RUN: %expect_exit 1 nabla-launch %t/syntax --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: %expect_exit 1 nabla-launch %t/empty --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: %expect_exit 1 nabla-launch %t/not-object --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: %expect_exit 1 nabla-launch %t/version --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=VERSION
// RUN: %expect_exit 1 nabla-launch %t/no-name --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=NO-NAME
// RUN: %expect_exit 1 nabla-launch %t/index-type --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=INDEX-TYPE
// RUN: %expect_exit 1 nabla-launch %t/binding-no-param --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=BINDING-NO-PARAM
// RUN: %expect_exit 1 nabla-launch %t/binding-no-binding --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=BINDING-NO-BINDING
// RUN: %expect_exit 1 nabla-launch %t/binding-not-object --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=BINDING-NOT-OBJECT
// RUN: %expect_exit 1 nabla-launch %t/binding-range --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=BINDING-RANGE
// RUN: %expect_exit 1 nabla-launch %t/argument-no-param --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=ARGUMENT-NO-PARAM
// RUN: %expect_exit 1 nabla-launch %t/reloc-no-key --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=RELOC-NO-KEY
// RUN: %expect_exit 1 nabla-launch %t/module-path --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=MODULE-PATH
// RUN: mkdir -p %t/deep && /usr/bin/python3 -c "print('[' * 200000)" > %t/deep/manifest.json
// RUN: %expect_exit 1 nabla-launch %t/deep --kernel=k --grid=1 --block=1 2>&1 | FileCheck %s --check-prefix=DEEP

// SYNTAX: error: {{.*}}syntax/manifest.json: malformed manifest: parse error at line 3, column 1: syntax error while parsing value - unexpected '}'
// EMPTY: error: {{.*}}empty/manifest.json: malformed manifest: parse error at line 1, column 1: {{.*}}unexpected end of input
// FORMAT: error: {{.*}}not-object/manifest.json: not a Nabla manifest (missing "format": "nabla-manifest")
// VERSION: malformed manifest: version: unsupported manifest version 2 (this runtime reads version 1)
// NO-NAME: malformed manifest: kernels[0]: missing "name"
// INDEX-TYPE: malformed manifest: kernels[0].params[1].index: expected an integer, found string
// BINDING-NO-PARAM: malformed manifest: kernels[0].bindings[1]: missing "param"
// BINDING-NO-BINDING: malformed manifest: kernels[0].bindings[0]: missing "binding"
// BINDING-NOT-OBJECT: malformed manifest: kernels[0].bindings[0]: expected an object, found array
// BINDING-RANGE: malformed manifest: kernels[0].bindings[0].binding: -1 is out of range [0, 4294967295]
// ARGUMENT-NO-PARAM: malformed manifest: kernels[0].arguments[0]: missing "param"
// RELOC-NO-KEY: malformed manifest: relocations[0]: missing "key"
// MODULE-PATH: malformed manifest: modules.kernels[0]: expected a file name in the manifest's directory, found "../kernels.spv"
// DEEP: malformed manifest: parse error at line 2, column 1: {{.*}}unexpected end of input

//--- syntax/manifest.json
{"format": "nabla-manifest",
 "kernels": [
}
//--- empty/manifest.json
//--- not-object/manifest.json
["format", "nabla-manifest"]
//--- version/manifest.json
{"format": "nabla-manifest", "version": 2}
//--- no-name/manifest.json
{"format": "nabla-manifest", "kernels": [{"module": "kernels"}]}
//--- index-type/manifest.json
{"format": "nabla-manifest", "kernels": [{"name": "k", "module": "kernels",
 "params": [{"index": 0, "kind": "scalar", "type": "f32"},
            {"index": "1", "kind": "scalar", "type": "f32"}]}]}
//--- binding-no-param/manifest.json
{"format": "nabla-manifest", "kernels": [{"name": "k", "module": "kernels",
 "bindings": [{"binding": 0, "param": 0, "kind": "buffer", "type": "f32"},
              {"binding": 1, "kind": "scalar", "type": "i32"}]}]}
//--- binding-no-binding/manifest.json
{"format": "nabla-manifest", "kernels": [{"name": "k", "module": "kernels",
 "bindings": [{"param": 0, "kind": "buffer", "type": "f32"}]}]}
//--- binding-not-object/manifest.json
{"format": "nabla-manifest", "kernels": [{"name": "k", "module": "kernels",
 "bindings": [[0, 0]]}]}
//--- binding-range/manifest.json
{"format": "nabla-manifest", "kernels": [{"name": "k", "module": "kernels",
 "bindings": [{"binding": -1, "param": 0}]}]}
//--- argument-no-param/manifest.json
{"format": "nabla-manifest", "kernels": [{"name": "k", "module": "kernels",
 "arguments": [{"field": "value", "type": "f32"}]}]}
//--- reloc-no-key/manifest.json
{"format": "nabla-manifest", "relocations": [{"module": "kernels", "strategy": "patch"}]}
//--- module-path/manifest.json
{"format": "nabla-manifest", "modules": {"kernels": ["../kernels.spv"]}}
