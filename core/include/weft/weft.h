// The umbrella header: everything a weft user needs, with the OpenCL backend registered.
#pragma once

#include "weft/array.h"
#include "weft/associative_scan.h"
#include "weft/backend.h"
#include "weft/callback.h"
#include "weft/control_flow.h"
#include "weft/debug.h"
#include "weft/dtype.h"
#include "weft/error.h"
#include "weft/hcb.h"
#include "weft/host_array.h"
#include "weft/image.h"
#include "weft/ir/graph.h"
#include "weft/ir/text.h"
#include "weft/nn.h"
#include "weft/np.h"
#include "weft/np_linalg.h"
#include "weft/ops.h"
#include "weft/random.h"
#include "weft/random_key_array.h"
#include "weft/shape.h"
#include "weft/trace/jit.h"
#if __has_include("weft/opencl/register.h")
#include "weft/opencl/register.h"
#endif
