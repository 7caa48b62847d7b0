#ifndef PUSHFLEET_CEPOLL_SHIM_H
#define PUSHFLEET_CEPOLL_SHIM_H
// Linux's readiness API, which Swift's Glibc module leaves out: the Redis module's event loop.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
