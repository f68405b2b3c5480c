//===- Manifest.cpp - The kernel manifest written by nabla-compile --------===//
//
// Converts the parsed JSON of manifest.json into typed records, rejecting
// manifests that lack what a launch needs.
//
//===----------------------------------------------------------------------===//

#include "nabla/Runtime/Manifest.h"

#include "nabla/Runtime/Json.h"

using namespace nabla::runtime;

const KernelInfo *Manifest::findKernel(const std::string &name) const {
  for (const KernelInfo &kernel : kernels)
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

bool nabla::runtime::parseManifest(const std::string &text, Manifest &manifest,
                                   std::string &error) {
  JsonValue root;
  if (!parseJson(text, root, error)) {
    error = "malformed manifest: " + error;
    return false;
  }
  if (root["format"].str() != "nabla-manifest") {
    error = "not a Nabla manifest (missing \"format\": \"nabla-manifest\")";
    return false;
  }
  manifest = Manifest();
  manifest.target = root["target"].str();
  manifest.chip = root["chip"].str();
  for (const auto &[name, files] : root["modules"].object)
    for (const JsonValue &file : files.array)
      manifest.modules[name].push_back(file.str());

  for (const JsonValue &k : root["kernels"].array) {
    KernelInfo kernel;
    kernel.name = k["name"].str();
    kernel.module = k["module"].str();
    if (kernel.name.empty() || kernel.module.empty()) {
      error = "malformed manifest: kernel without name or module";
      return false;
    }
    for (const JsonValue &p : k["params"].array) {
      ParamInfo param;
      param.index = p["index"].integer();
      param.isBuffer = p["kind"].str() == "buffer";
      param.type = p["type"].str();
      param.element = p["element"].str();
      for (const JsonValue &extent : p["shape"].array)
        param.shape.push_back(extent.isNull() ? -1 : extent.integer());
      param.relocKey = p["reloc"].str();
      kernel.params.push_back(param);
    }
    if (k["workgroup_size"].isArray()) {
      std::vector<int64_t> size;
      for (const JsonValue &extent : k["workgroup_size"].array)
        size.push_back(extent.integer());
      kernel.workgroupSize = size;
    }
    for (const JsonValue &b : k["bindings"].array)
      kernel.bindings.push_back({static_cast<unsigned>(b["binding"].integer()),
                                 static_cast<unsigned>(b["param"].integer()),
                                 b["kind"].str(), b["type"].str(),
                                 static_cast<int>(b["dim"].integer(-1))});
    for (const JsonValue &a : k["arguments"].array)
      kernel.arguments.push_back({static_cast<unsigned>(a["param"].integer()),
                                  a["field"].str(), a["type"].str(),
                                  static_cast<int>(a["dim"].integer(-1))});
    manifest.kernels.push_back(std::move(kernel));
  }
  for (const JsonValue &r : root["relocations"].array) {
    RelocationInfo record;
    record.key = r["key"].str();
    record.module = r["module"].str();
    record.strategy = r["strategy"].str();
    record.symbol = r["symbol"].str();
    record.type = r["type"].str();
    record.pointer = r["pointer"].boolean;
    record.constant = r["constant"].boolean;
    record.element = r["element"].str();
    for (const JsonValue &extent : r["shape"].array)
      record.shape.push_back(extent.isNull() ? -1 : extent.integer());
    record.shadowOf = r["shadow_of"].str();
    if (record.key.empty()) {
      error = "malformed manifest: relocation record without a key";
      return false;
    }
    manifest.relocations.push_back(std::move(record));
  }
  return true;
}
