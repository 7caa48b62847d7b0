#ifndef PUSHFLEET_CHIREDIS_SHIM_H
#define PUSHFLEET_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>
#endif
