// gpuscan: device-wide prefix scan and reduction on GPUs (Decoupled Fallback).
#pragma once

#include "gpuscan/algorithms.hpp"
#include "gpuscan/compactor.hpp"
#include "gpuscan/device.hpp"
#include "gpuscan/error.hpp"
#include "gpuscan/scanner.hpp"
#include "gpuscan/types.hpp"
