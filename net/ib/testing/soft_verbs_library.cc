// libminimpi_softib.so: the soft device as a test device library for libmpi
// (MINIMPI_IB_TEST_DEVICE names it; net/ib/verbs.h's
// kTestDeviceFactorySymbol is what libmpi looks up).
#include "net/ib/testing/soft_verbs.h"
#include "net/ib/verbs.h"

extern "C" __attribute__((visibility("default"))) minimpi::net::ib::Verbs*
minimpi_create_test_verbs() {
  return minimpi::net::ib::testing::CreateSoftVerbs().release();
}
