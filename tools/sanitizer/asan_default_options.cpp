// Compiled into every weft target of an AddressSanitizer build (see the top-level CMakeLists).
//
// GCC 12's sanitizer runtime (Debian 12's) mistakes a dynamic TLS block that happens to start
// 16 bytes into a page for a pre-2.25 glibc block with a header, reads a bogus range from the
// two words before it, and LeakSanitizer's tracer then crashes at exit ("Tracer caught signal
// 11"), at random, in processes whose OpenCL driver (PoCL, LLVM: loaded with dlopen, so their
// thread_locals are dynamic TLS) compiled kernels. Fixed upstream in GCC 14 / LLVM 17. Not
// intercepting __tls_get_addr only stops scanning the drivers' dynamic TLS, whose allocations
// tests/lsan.supp already ignores; weft's own thread_locals are static TLS and still scanned.
// Setting the flag in ASAN_OPTIONS still overrides this default.
extern "C" const char* __asan_default_options() {
  return "intercept_tls_get_addr=0";
}
