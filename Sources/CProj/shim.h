#ifndef GEO_CLUSTER_CPROJ_SHIM_H
#define GEO_CLUSTER_CPROJ_SHIM_H

// PROJ's coordinate operation API (proj_create, proj_trans, ...).
#include <proj.h>

// Karney's geodesic routines (geod_init, geod_inverse, geod_direct), shipped with PROJ.
#include <geodesic.h>

#endif
