#ifndef GEO_CLUSTER_CDEFLATE_SHIM_H
#define GEO_CLUSTER_CDEFLATE_SHIM_H

// libdeflate's whole-buffer compressors (libdeflate_alloc_compressor, libdeflate_gzip_compress).
#include <libdeflate.h>

#endif
