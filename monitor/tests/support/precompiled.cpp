// Compiles support/precompiled.h once; every monitor test reuses the result.
