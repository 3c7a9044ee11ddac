// Including this header links the OpenCL backend into the program and registers it with
// core, so that weft::devices() and weft::default_device() see every OpenCL device.
#pragma once

namespace weft::opencl {

// Registers the OpenCL backend with weft::register_backend once (later calls do nothing) and
// returns true. Device discovery still waits for the first use of a device.
bool install_backend();

}  // namespace weft::opencl

// One definition across the program; initialising it pulls install_backend's object file in.
inline const bool weft_opencl_backend_installed = weft::opencl::install_backend();
