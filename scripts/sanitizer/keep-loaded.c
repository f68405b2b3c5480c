/*===- keep-loaded.c - dlclose that keeps libraries loaded (LSan) ---------===*\
|*                                                                            *|
|* Preloaded by scripts/sanitize.sh. The runtime dlcloses the Vulkan loader   *|
|* (and the loader its drivers and layers) before exit, so LeakSanitizer's    *|
|* report at exit would show their allocations as "<unknown module>" frames,  *|
|* which no suppression can name. Keeping every library loaded gives those    *|
|* frames their module, so scripts/sanitizer/lsan.supp can suppress           *|
|* third-party leaks by library while leaks in Nabla's code still fail.       *|
|* Libraries' destructors then run at exit instead of at dlclose.             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

int dlclose(void *handle) {
  (void)handle;
  return 0;
}
