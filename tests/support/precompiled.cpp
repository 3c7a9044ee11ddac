// Compiles tests/support/precompiled.h once; every test file reuses the result.
