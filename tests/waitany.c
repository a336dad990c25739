/* Multiple-completion calls with MPI_REQUEST_NULL entries mixed in.
 * Rank 0 posts receives; S (rank 1, or rank 0 itself when alone) sends one
 * message per "release", so exactly one request at a time can complete and
 * each call's answer is predictable.  Checked: Waitany/Testany skip null
 * entries, null the completed one and return its index; all-null arrays
 * give MPI_UNDEFINED; Waitsome/Testsome indices and per-index statuses;
 * Waitall gives null entries the empty status; Testall modifies nothing
 * until everything is done; Request_get_status does not free. */
#include "test_util.h"

enum { kGoTag = 1000, kStop = -1, kMaxBytes = 4096 };

static int g_sender;
static MPI_Request g_self_sends[64];
static unsigned char* g_self_buffers[64];
static int g_self_count;

static size_t bytes_for_tag(int tag) { return (size_t)tag * 97 + 13; }

/* Makes S send exactly one message with `tag` to rank 0. */
static void release(int tag) {
  if (g_sender == 0) {
    unsigned char* buffer = (unsigned char*)test_malloc(bytes_for_tag(tag));
    test_fill(buffer, bytes_for_tag(tag), 0, tag);
    g_self_buffers[g_self_count] = buffer;
    MPI_CHECK(MPI_Isend(buffer, (int)bytes_for_tag(tag), MPI_BYTE, 0, tag, MPI_COMM_WORLD,
                        &g_self_sends[g_self_count++]));
  } else {
    MPI_CHECK(MPI_Send(&tag, 1, MPI_INT, g_sender, kGoTag, MPI_COMM_WORLD));
  }
}

static void serve_releases(void) {
  unsigned char* buffer = (unsigned char*)test_malloc(kMaxBytes);
  for (;;) {
    int tag;
    MPI_CHECK(MPI_Recv(&tag, 1, MPI_INT, 0, kGoTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (tag == kStop) break;
    test_fill(buffer, bytes_for_tag(tag), g_sender, tag);
    MPI_CHECK(MPI_Send(buffer, (int)bytes_for_tag(tag), MPI_BYTE, 0, tag, MPI_COMM_WORLD));
  }
  free(buffer);
}

static unsigned char g_buffers[16][kMaxBytes];

static MPI_Request post(int tag) {
  MPI_Request request;
  memset(g_buffers[tag], 0, kMaxBytes);
  MPI_CHECK(MPI_Irecv(g_buffers[tag], kMaxBytes, MPI_BYTE, g_sender, tag, MPI_COMM_WORLD,
                      &request));
  return request;
}

static void check_received(int tag, const MPI_Status* status, const char* what) {
  CHECK_STATUS(*status, g_sender, tag, MPI_BYTE, (int)bytes_for_tag(tag), what);
  CHECK_PATTERN(g_buffers[tag], bytes_for_tag(tag), g_sender, tag, what);
}

static void check_empty_status(const MPI_Status* status, const char* what) {
  int count = -1;
  MPI_Get_count(status, MPI_BYTE, &count);
  CHECK(status->MPI_SOURCE == MPI_ANY_SOURCE && status->MPI_TAG == MPI_ANY_TAG && count == 0,
        "%s: expected the empty status, got source %d tag %d count %d", what,
        status->MPI_SOURCE, status->MPI_TAG, count);
}

static void receiver(void) {
  MPI_Status status, statuses[6];
  int index = -1, flag = 0, outcount = -1, indices[6];

  /* Waitany / Testany / Waitsome, one completion each. */
  MPI_Request requests[6] = {MPI_REQUEST_NULL, post(0), MPI_REQUEST_NULL,
                             post(1),          post(2), MPI_REQUEST_NULL};
  release(2);
  MPI_CHECK(MPI_Waitany(6, requests, &index, &status));
  CHECK(index == 4, "Waitany returned index %d, expected 4", index);
  CHECK(requests[4] == MPI_REQUEST_NULL, "Waitany did not null the completed request");
  check_received(2, &status, "Waitany");

  release(0);
  flag = 0;
  while (!flag) MPI_CHECK(MPI_Testany(6, requests, &index, &flag, &status));
  CHECK(index == 1 && requests[1] == MPI_REQUEST_NULL,
        "Testany returned index %d (expected 1) or left it allocated", index);
  check_received(0, &status, "Testany");

  release(1);
  MPI_CHECK(MPI_Waitsome(6, requests, &outcount, indices, statuses));
  CHECK(outcount == 1 && indices[0] == 3 && requests[3] == MPI_REQUEST_NULL,
        "Waitsome gave outcount %d index %d, expected 1 and 3", outcount, indices[0]);
  check_received(1, &statuses[0], "Waitsome");

  /* Now every entry is null. */
  index = 0;
  MPI_CHECK(MPI_Waitany(6, requests, &index, &status));
  CHECK(index == MPI_UNDEFINED, "Waitany on all-null requests gave index %d", index);
  check_empty_status(&status, "Waitany on all-null requests");
  flag = 0;
  index = 0;
  MPI_CHECK(MPI_Testany(6, requests, &index, &flag, &status));
  CHECK(flag && index == MPI_UNDEFINED, "Testany on all-null: flag %d index %d", flag, index);
  check_empty_status(&status, "Testany on all-null requests");
  outcount = 0;
  MPI_CHECK(MPI_Waitsome(6, requests, &outcount, indices, statuses));
  CHECK(outcount == MPI_UNDEFINED, "Waitsome on all-null gave outcount %d", outcount);
  outcount = 0;
  MPI_CHECK(MPI_Testsome(6, requests, &outcount, indices, statuses));
  CHECK(outcount == MPI_UNDEFINED, "Testsome on all-null gave outcount %d", outcount);
  flag = 0;
  MPI_CHECK(MPI_Testall(6, requests, &flag, statuses));
  CHECK(flag, "Testall on all-null gave flag false");
  MPI_CHECK(MPI_Waitall(6, requests, statuses));
  for (int i = 0; i < 6; ++i) check_empty_status(&statuses[i], "Waitall on all-null requests");
  index = 0;
  MPI_CHECK(MPI_Waitany(0, NULL, &index, &status));
  CHECK(index == MPI_UNDEFINED, "Waitany with count 0 gave index %d", index);

  /* Waitall: a null entry in the middle gets the empty status. */
  MPI_Request trio[3] = {post(3), MPI_REQUEST_NULL, post(4)};
  release(4);
  release(3);
  MPI_CHECK(MPI_Waitall(3, trio, statuses));
  check_received(3, &statuses[0], "Waitall entry 0");
  check_empty_status(&statuses[1], "Waitall null entry 1");
  check_received(4, &statuses[2], "Waitall entry 2");
  for (int i = 0; i < 3; ++i) CHECK(trio[i] == MPI_REQUEST_NULL, "Waitall left entry %d", i);

  /* Testall with one of two outstanding: false, and nothing is freed. */
  MPI_Request pair[3] = {post(5), MPI_REQUEST_NULL, post(6)};
  release(5);
  /* Wait on MPI_REQUEST_NULL returns at once with the empty status. */
  MPI_Request null_request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Wait(&null_request, &status));
  check_empty_status(&status, "Wait on MPI_REQUEST_NULL");
  for (int attempt = 0; attempt < 1000; ++attempt) {
    MPI_CHECK(MPI_Testall(3, pair, &flag, statuses));
    CHECK(!flag, "Testall reported completion while message 6 was never sent");
  }
  CHECK(pair[0] != MPI_REQUEST_NULL && pair[2] != MPI_REQUEST_NULL,
        "Testall freed a request although it returned flag false");
  release(6);
  flag = 0;
  while (!flag) MPI_CHECK(MPI_Testall(3, pair, &flag, statuses));
  check_received(5, &statuses[0], "Testall entry 0");
  check_empty_status(&statuses[1], "Testall null entry 1");
  check_received(6, &statuses[2], "Testall entry 2");

  /* Testsome collects two completions, in whatever calls they come. */
  MPI_Request some[4] = {MPI_REQUEST_NULL, post(7), MPI_REQUEST_NULL, post(8)};
  release(8);
  release(7);
  int seen[4] = {0, 0, 0, 0};
  int total = 0;
  while (total < 2) {
    MPI_CHECK(MPI_Testsome(4, some, &outcount, indices, statuses));
    CHECK(outcount != MPI_UNDEFINED && outcount >= 0 && outcount <= 2,
          "Testsome outcount %d with requests still active", outcount);
    for (int i = 0; i < outcount; ++i) {
      const int k = indices[i];
      CHECK(k == 1 || k == 3, "Testsome reported index %d, which was null", k);
      CHECK(!seen[k], "Testsome reported index %d twice", k);
      seen[k] = 1;
      check_received(k == 1 ? 7 : 8, &statuses[i], "Testsome");
      CHECK(some[k] == MPI_REQUEST_NULL, "Testsome left index %d allocated", k);
    }
    total += outcount;
  }

  /* Request_get_status reports completion but leaves the request to Wait. */
  MPI_Request lone = post(9);
  release(9);
  flag = 0;
  while (!flag) MPI_CHECK(MPI_Request_get_status(lone, &flag, &status));
  CHECK(lone != MPI_REQUEST_NULL, "Request_get_status freed the request");
  check_received(9, &status, "Request_get_status");
  MPI_CHECK(MPI_Request_get_status(lone, &flag, &status));
  CHECK(flag, "second Request_get_status gave flag false");
  MPI_CHECK(MPI_Wait(&lone, &status));
  CHECK(lone == MPI_REQUEST_NULL, "Wait after Request_get_status did not free");
  check_received(9, &status, "Wait after Request_get_status");

  if (g_sender != 0) {
    int stop = kStop;
    MPI_CHECK(MPI_Send(&stop, 1, MPI_INT, g_sender, kGoTag, MPI_COMM_WORLD));
  }
  MPI_CHECK(MPI_Waitall(g_self_count, g_self_sends, MPI_STATUSES_IGNORE));
  for (int i = 0; i < g_self_count; ++i) free(g_self_buffers[i]);
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  g_sender = size > 1 ? 1 : 0;
  if (rank == 0) receiver();
  else if (rank == g_sender) serve_releases();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("waitany", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
