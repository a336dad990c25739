/* minimpi's public header: C and C++ clean.
 *
 * Handles are pointers to incomplete struct types and every constant has the
 * value of the MPI-5 standard ABI (mpi_abi.h as the MPI Forum and MPICH
 * publish it), so binaries built against the standard ABI can run on minimpi.
 * Every function is also exported as PMPI_* for profiling interposers. */
#ifndef MINIMPI_MPI_H_
#define MINIMPI_MPI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 4
#define MPI_SUBVERSION 1
#define MINIMPI_VERSION "0.1.0"

typedef intptr_t MPI_Aint;
typedef int64_t MPI_Offset;
typedef int64_t MPI_Count;
typedef int MPI_Fint;

typedef struct {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  int MPI_internal[5]; /* byte count (64 bits), cancelled flag */
} MPI_Status;

typedef struct MPI_ABI_Op* MPI_Op;
#define MPI_OP_NULL ((MPI_Op)0x00000020)
#define MPI_SUM ((MPI_Op)0x00000021)
#define MPI_MIN ((MPI_Op)0x00000022)
#define MPI_MAX ((MPI_Op)0x00000023)
#define MPI_PROD ((MPI_Op)0x00000024)
#define MPI_BAND ((MPI_Op)0x00000028)
#define MPI_BOR ((MPI_Op)0x00000029)
#define MPI_BXOR ((MPI_Op)0x0000002a)
#define MPI_LAND ((MPI_Op)0x00000030)
#define MPI_LOR ((MPI_Op)0x00000031)
#define MPI_LXOR ((MPI_Op)0x00000032)
#define MPI_MINLOC ((MPI_Op)0x00000038)
#define MPI_MAXLOC ((MPI_Op)0x00000039)
#define MPI_REPLACE ((MPI_Op)0x0000003c)
#define MPI_NO_OP ((MPI_Op)0x0000003d)

typedef struct MPI_ABI_Comm* MPI_Comm;
#define MPI_COMM_NULL ((MPI_Comm)0x00000100)
#define MPI_COMM_WORLD ((MPI_Comm)0x00000101)
#define MPI_COMM_SELF ((MPI_Comm)0x00000102)

typedef struct MPI_ABI_Group* MPI_Group;
#define MPI_GROUP_NULL ((MPI_Group)0x00000108)
#define MPI_GROUP_EMPTY ((MPI_Group)0x00000109)

typedef struct MPI_ABI_Win* MPI_Win;
#define MPI_WIN_NULL ((MPI_Win)0x00000110)

typedef struct MPI_ABI_File* MPI_File;
#define MPI_FILE_NULL ((MPI_File)0x00000118)

typedef struct MPI_ABI_Session* MPI_Session;
#define MPI_SESSION_NULL ((MPI_Session)0x00000120)

typedef struct MPI_ABI_Message* MPI_Message;
#define MPI_MESSAGE_NULL ((MPI_Message)0x00000128)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x00000129)

typedef struct MPI_ABI_Info* MPI_Info;
#define MPI_INFO_NULL ((MPI_Info)0x00000130)
#define MPI_INFO_ENV ((MPI_Info)0x00000131)

typedef struct MPI_ABI_Errhandler* MPI_Errhandler;
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0x00000140)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x00000141)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)0x00000142)
#define MPI_ERRORS_ABORT ((MPI_Errhandler)0x00000143)

typedef struct MPI_ABI_Request* MPI_Request;
#define MPI_REQUEST_NULL ((MPI_Request)0x00000180)

typedef struct MPI_ABI_Datatype* MPI_Datatype;
#define MPI_DATATYPE_NULL ((MPI_Datatype)0x00000200)
#define MPI_AINT ((MPI_Datatype)0x00000201)
#define MPI_COUNT ((MPI_Datatype)0x00000202)
#define MPI_OFFSET ((MPI_Datatype)0x00000203)
#define MPI_PACKED ((MPI_Datatype)0x00000207)
#define MPI_SHORT ((MPI_Datatype)0x00000208)
#define MPI_INT ((MPI_Datatype)0x00000209)
#define MPI_LONG ((MPI_Datatype)0x0000020a)
#define MPI_LONG_LONG ((MPI_Datatype)0x0000020b)
#define MPI_LONG_LONG_INT MPI_LONG_LONG
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)0x0000020c)
#define MPI_UNSIGNED ((MPI_Datatype)0x0000020d)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)0x0000020e)
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)0x0000020f)
#define MPI_FLOAT ((MPI_Datatype)0x00000210)
#define MPI_C_FLOAT_COMPLEX ((MPI_Datatype)0x00000212)
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_CXX_FLOAT_COMPLEX ((MPI_Datatype)0x00000213)
#define MPI_DOUBLE ((MPI_Datatype)0x00000214)
#define MPI_C_DOUBLE_COMPLEX ((MPI_Datatype)0x00000216)
#define MPI_CXX_DOUBLE_COMPLEX ((MPI_Datatype)0x00000217)
#define MPI_LOGICAL ((MPI_Datatype)0x00000218)
#define MPI_INTEGER ((MPI_Datatype)0x00000219)
#define MPI_REAL ((MPI_Datatype)0x0000021a)
#define MPI_COMPLEX ((MPI_Datatype)0x0000021b)
#define MPI_DOUBLE_PRECISION ((MPI_Datatype)0x0000021c)
#define MPI_DOUBLE_COMPLEX ((MPI_Datatype)0x0000021d)
#define MPI_CHARACTER ((MPI_Datatype)0x0000021e)
#define MPI_LONG_DOUBLE ((MPI_Datatype)0x00000220)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x00000224)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x00000225)
#define MPI_FLOAT_INT ((MPI_Datatype)0x00000228)
#define MPI_DOUBLE_INT ((MPI_Datatype)0x00000229)
#define MPI_LONG_INT ((MPI_Datatype)0x0000022a)
#define MPI_2INT ((MPI_Datatype)0x0000022b)
#define MPI_SHORT_INT ((MPI_Datatype)0x0000022c)
#define MPI_LONG_DOUBLE_INT ((MPI_Datatype)0x0000022d)
#define MPI_2REAL ((MPI_Datatype)0x00000230)
#define MPI_2DOUBLE_PRECISION ((MPI_Datatype)0x00000231)
#define MPI_2INTEGER ((MPI_Datatype)0x00000232)
#define MPI_C_BOOL ((MPI_Datatype)0x00000238)
#define MPI_CXX_BOOL ((MPI_Datatype)0x00000239)
#define MPI_WCHAR ((MPI_Datatype)0x0000023c)
#define MPI_INT8_T ((MPI_Datatype)0x00000240)
#define MPI_UINT8_T ((MPI_Datatype)0x00000241)
#define MPI_CHAR ((MPI_Datatype)0x00000243)
#define MPI_SIGNED_CHAR ((MPI_Datatype)0x00000244)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)0x00000245)
#define MPI_BYTE ((MPI_Datatype)0x00000247)
#define MPI_INT16_T ((MPI_Datatype)0x00000248)
#define MPI_UINT16_T ((MPI_Datatype)0x00000249)
#define MPI_INT32_T ((MPI_Datatype)0x00000250)
#define MPI_UINT32_T ((MPI_Datatype)0x00000251)
#define MPI_INT64_T ((MPI_Datatype)0x00000258)
#define MPI_UINT64_T ((MPI_Datatype)0x00000259)
/* The optional Fortran types by size (MPI-4.1 section 3.2.2; the LOGICALs
 * are MPI-5.0's), as C programs see them. Each is 0x2c0 + 8 * log2(bytes) +
 * its kind (LOGICAL 0, INTEGER 1, REAL 2, COMPLEX 3), the standard ABI's
 * values. minimpi cannot do the arithmetic of the half-precision REAL*2
 * and COMPLEX*4: they keep their ABI values, and every call given one
 * answers MPI_ERR_TYPE. */
#define MPI_LOGICAL1 ((MPI_Datatype)0x000002c0)
#define MPI_INTEGER1 ((MPI_Datatype)0x000002c1)
#define MPI_LOGICAL2 ((MPI_Datatype)0x000002c8)
#define MPI_INTEGER2 ((MPI_Datatype)0x000002c9)
#define MPI_REAL2 ((MPI_Datatype)0x000002ca)
#define MPI_LOGICAL4 ((MPI_Datatype)0x000002d0)
#define MPI_INTEGER4 ((MPI_Datatype)0x000002d1)
#define MPI_REAL4 ((MPI_Datatype)0x000002d2)
#define MPI_COMPLEX4 ((MPI_Datatype)0x000002d3)
#define MPI_LOGICAL8 ((MPI_Datatype)0x000002d8)
#define MPI_INTEGER8 ((MPI_Datatype)0x000002d9)
#define MPI_REAL8 ((MPI_Datatype)0x000002da)
#define MPI_COMPLEX8 ((MPI_Datatype)0x000002db)
#define MPI_LOGICAL16 ((MPI_Datatype)0x000002e0)
#define MPI_INTEGER16 ((MPI_Datatype)0x000002e1)
#define MPI_REAL16 ((MPI_Datatype)0x000002e2)
#define MPI_COMPLEX16 ((MPI_Datatype)0x000002e3)
#define MPI_COMPLEX32 ((MPI_Datatype)0x000002eb)

enum {
  MPI_F_SOURCE = 0,
  MPI_F_TAG = 1,
  MPI_F_ERROR = 2,
  MPI_F_STATUS_SIZE = 8
};

/* Error classes. */
enum {
  MPI_SUCCESS = 0,
  MPI_ERR_BUFFER = 1,
  MPI_ERR_COUNT = 2,
  MPI_ERR_TYPE = 3,
  MPI_ERR_TAG = 4,
  MPI_ERR_COMM = 5,
  MPI_ERR_RANK = 6,
  MPI_ERR_REQUEST = 7,
  MPI_ERR_ROOT = 8,
  MPI_ERR_GROUP = 9,
  MPI_ERR_OP = 10,
  MPI_ERR_TOPOLOGY = 11,
  MPI_ERR_DIMS = 12,
  MPI_ERR_ARG = 13,
  MPI_ERR_UNKNOWN = 14,
  MPI_ERR_TRUNCATE = 15,
  MPI_ERR_OTHER = 16,
  MPI_ERR_INTERN = 17,
  MPI_ERR_PENDING = 18,
  MPI_ERR_IN_STATUS = 19,
  MPI_ERR_ACCESS = 20,
  MPI_ERR_AMODE = 21,
  MPI_ERR_ASSERT = 22,
  MPI_ERR_BAD_FILE = 23,
  MPI_ERR_BASE = 24,
  MPI_ERR_CONVERSION = 25,
  MPI_ERR_DISP = 26,
  MPI_ERR_DUP_DATAREP = 27,
  MPI_ERR_FILE_EXISTS = 28,
  MPI_ERR_FILE_IN_USE = 29,
  MPI_ERR_FILE = 30,
  MPI_ERR_INFO_KEY = 31,
  MPI_ERR_INFO_NOKEY = 32,
  MPI_ERR_INFO_VALUE = 33,
  MPI_ERR_INFO = 34,
  MPI_ERR_IO = 35,
  MPI_ERR_KEYVAL = 36,
  MPI_ERR_LOCKTYPE = 37,
  MPI_ERR_NAME = 38,
  MPI_ERR_NO_MEM = 39,
  MPI_ERR_NOT_SAME = 40,
  MPI_ERR_NO_SPACE = 41,
  MPI_ERR_NO_SUCH_FILE = 42,
  MPI_ERR_PORT = 43,
  MPI_ERR_QUOTA = 44,
  MPI_ERR_READ_ONLY = 45,
  MPI_ERR_RMA_ATTACH = 46,
  MPI_ERR_RMA_CONFLICT = 47,
  MPI_ERR_RMA_RANGE = 48,
  MPI_ERR_RMA_SHARED = 49,
  MPI_ERR_RMA_SYNC = 50,
  MPI_ERR_SERVICE = 51,
  MPI_ERR_SIZE = 52,
  MPI_ERR_SPAWN = 53,
  MPI_ERR_UNSUPPORTED_DATAREP = 54,
  MPI_ERR_UNSUPPORTED_OPERATION = 55,
  MPI_ERR_WIN = 56,
  /* Added after MPI-2.0, in the order the standard added them. */
  MPI_ERR_RMA_FLAVOR = 57,
  MPI_ERR_PROC_ABORTED = 58,
  MPI_ERR_VALUE_TOO_LARGE = 59,
  MPI_ERR_SESSION = 60,
  MPI_ERR_ERRHANDLER = 61,
  MPI_ERR_ABI = 62, /* MPI-5.0; the last predefined class */
  /* The tool interface's own error codes (MPI_T_* calls return them). */
  MPI_T_ERR_CANNOT_INIT = 1001,
  MPI_T_ERR_NOT_ACCESSIBLE = 1002,
  MPI_T_ERR_NOT_INITIALIZED = 1003,
  MPI_T_ERR_NOT_SUPPORTED = 1004,
  MPI_T_ERR_MEMORY = 1005,
  MPI_T_ERR_INVALID = 1006,
  MPI_T_ERR_INVALID_INDEX = 1007,
  MPI_T_ERR_INVALID_ITEM = 1008, /* deprecated in MPI-4.0 */
  MPI_T_ERR_INVALID_SESSION = 1009,
  MPI_T_ERR_INVALID_HANDLE = 1010,
  MPI_T_ERR_INVALID_NAME = 1011,
  MPI_T_ERR_OUT_OF_HANDLES = 1012,
  MPI_T_ERR_OUT_OF_SESSIONS = 1013,
  MPI_T_ERR_CVAR_SET_NOT_NOW = 1014,
  MPI_T_ERR_CVAR_SET_NEVER = 1015,
  MPI_T_ERR_PVAR_NO_WRITE = 1016,
  MPI_T_ERR_PVAR_NO_STARTSTOP = 1017,
  MPI_T_ERR_PVAR_NO_ATOMIC = 1018,
  MPI_ERR_LASTCODE = 0x3fff
};

#define MPI_BOTTOM ((void*)0)
#define MPI_IN_PLACE ((void*)1)
#define MPI_BUFFER_AUTOMATIC ((void*)2)

#define MPI_ARGV_NULL ((char**)0)
#define MPI_ARGVS_NULL ((char***)0)
#define MPI_ERRCODES_IGNORE ((int*)0)
#define MPI_STATUS_IGNORE ((MPI_Status*)0)
#define MPI_STATUSES_IGNORE ((MPI_Status*)0)
#define MPI_UNWEIGHTED ((int*)10)
#define MPI_WEIGHTS_EMPTY ((int*)11)

#define MPI_BSEND_OVERHEAD 512
#define MPI_MAX_DATAREP_STRING 128
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_INFO_KEY 256
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_MAX_OBJECT_NAME 128
/* Sessions (MPI-4.1 chapter 11); the standard ABI's values. */
#define MPI_MAX_PSET_NAME_LEN 1024
#define MPI_MAX_STRINGTAG_LEN 1024
#define MPI_MAX_PORT_NAME 1024
#define MPI_MAX_PROCESSOR_NAME 256

enum {
  MPI_ANY_SOURCE = -1,
  MPI_ANY_TAG = -2,
  MPI_PROC_NULL = -3,
  MPI_ROOT = -4,
  MPI_UNDEFINED = -32766
};

/* Never the id of a keyval (created keyvals start at 1 << 20; the
 * predefined attribute keys are 501..507 and 601..605). */
enum { MPI_KEYVAL_INVALID = 0 };

/* Thread support levels: increasing, as the standard requires. */
enum {
  MPI_THREAD_SINGLE = 0,
  MPI_THREAD_FUNNELED = 1024,
  MPI_THREAD_SERIALIZED = 2048,
  MPI_THREAD_MULTIPLE = 4096
};

enum {
  MPI_IDENT = 201,
  MPI_CONGRUENT = 202,
  MPI_SIMILAR = 203,
  MPI_UNEQUAL = 204
};

/* Datatype decoding (MPI_Type_get_envelope). */
enum {
  MPI_COMBINER_NAMED = 101,
  MPI_COMBINER_DUP = 102,
  MPI_COMBINER_CONTIGUOUS = 103,
  MPI_COMBINER_VECTOR = 104,
  MPI_COMBINER_HVECTOR = 105,
  MPI_COMBINER_INDEXED = 106,
  MPI_COMBINER_HINDEXED = 107,
  MPI_COMBINER_INDEXED_BLOCK = 108,
  MPI_COMBINER_HINDEXED_BLOCK = 109,
  MPI_COMBINER_STRUCT = 110,
  MPI_COMBINER_SUBARRAY = 111,
  MPI_COMBINER_DARRAY = 112,
  MPI_COMBINER_F90_INTEGER = 113,
  MPI_COMBINER_F90_REAL = 114,
  MPI_COMBINER_F90_COMPLEX = 115,
  MPI_COMBINER_RESIZED = 116,
  MPI_COMBINER_VALUE_INDEX = 117
};

/* Array datatypes (MPI_Type_create_subarray, MPI_Type_create_darray). */
enum {
  MPI_ORDER_C = 0xC,
  MPI_ORDER_FORTRAN = 0xF,
  MPI_DISTRIBUTE_NONE = 0x10,
  MPI_DISTRIBUTE_BLOCK = 0x11,
  MPI_DISTRIBUTE_CYCLIC = 0x12,
  MPI_DISTRIBUTE_DFLT_DARG = 0x13
};

/* MPI_Type_match_size's type classes (typebind: datatype bindings). */
enum {
  MPIX_TYPECLASS_LOGICAL = 191, /* the standard ABI's: MPI_LOGICAL1..16 */
  MPI_TYPECLASS_INTEGER = 192,
  MPI_TYPECLASS_REAL = 193,
  MPI_TYPECLASS_COMPLEX = 194
};

/* A user reduction: inoutvec[i] = invec[i] (op) inoutvec[i], i < *len. */
typedef void MPI_User_function(void* invec, void* inoutvec, int* len,
                               MPI_Datatype* datatype);
/* The same with a large count (MPI_Op_create_c). */
typedef void MPI_User_function_c(void* invec, void* inoutvec, MPI_Count* len,
                                 MPI_Datatype* datatype);

/* A user error handler: called with the communicator and the error code. */
typedef void MPI_Comm_errhandler_function(MPI_Comm* comm, int* error_code, ...);

/* The largest tag minimpi accepts (the MPI_TAG_UB attribute's value). */
#define MINIMPI_TAG_UB 2147483647

/* Declares MPI_<name> and its profiling twin PMPI_<name>. */
#define MINIMPI_DECLARE(ret, name, params) \
  ret MPI_##name params;                   \
  ret PMPI_##name params;
/* The same for the extensions MPIX_<name> / PMPIX_<name>. */
#define MINIMPIX_DECLARE(ret, name, params) \
  ret MPIX_##name params;                   \
  ret PMPIX_##name params;

/* Environment. */
MINIMPI_DECLARE(int, Init, (int* argc, char*** argv))
MINIMPI_DECLARE(int, Init_thread,
                (int* argc, char*** argv, int required, int* provided))
MINIMPI_DECLARE(int, Finalize, (void))
MINIMPI_DECLARE(int, Initialized, (int* flag))
MINIMPI_DECLARE(int, Finalized, (int* flag))
MINIMPI_DECLARE(int, Query_thread, (int* provided))
MINIMPI_DECLARE(int, Is_thread_main, (int* flag))
MINIMPI_DECLARE(int, Abort, (MPI_Comm comm, int errorcode))
MINIMPI_DECLARE(int, Get_version, (int* version, int* subversion))
MINIMPI_DECLARE(int, Get_library_version, (char* version, int* resultlen))
MINIMPI_DECLARE(int, Get_processor_name, (char* name, int* resultlen))
MINIMPI_DECLARE(double, Wtime, (void))
MINIMPI_DECLARE(double, Wtick, (void))
/* Profiling control (MPI-4.1 15.2): for PMPI tools; the library ignores it. */
MINIMPI_DECLARE(int, Pcontrol, (const int level, ...))

/* Errors. */
MINIMPI_DECLARE(int, Error_string,
                (int errorcode, char* string, int* resultlen))
MINIMPI_DECLARE(int, Error_class, (int errorcode, int* errorclass))
MINIMPI_DECLARE(int, Comm_set_errhandler,
                (MPI_Comm comm, MPI_Errhandler errhandler))
MINIMPI_DECLARE(int, Comm_get_errhandler,
                (MPI_Comm comm, MPI_Errhandler* errhandler))
MINIMPI_DECLARE(int, Errhandler_free, (MPI_Errhandler * errhandler))
MINIMPI_DECLARE(int, Comm_create_errhandler,
                (MPI_Comm_errhandler_function * comm_errhandler_fn,
                 MPI_Errhandler* errhandler))
MINIMPI_DECLARE(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
MINIMPI_DECLARE(int, Add_error_class, (int* errorclass))
MINIMPI_DECLARE(int, Add_error_code, (int errorclass, int* errorcode))
MINIMPI_DECLARE(int, Add_error_string, (int errorcode, const char* string))
MINIMPI_DECLARE(int, Remove_error_class, (int errorclass))
MINIMPI_DECLARE(int, Remove_error_code, (int errorcode))
MINIMPI_DECLARE(int, Remove_error_string, (int errorcode))
/* MPICH 4.0's names for the MPI-4.1 removals above. */
MINIMPIX_DECLARE(int, Delete_error_class, (int errorclass))
MINIMPIX_DECLARE(int, Delete_error_code, (int errorcode))
MINIMPIX_DECLARE(int, Delete_error_string, (int errorcode))

/* Communicators. */
MINIMPI_DECLARE(int, Comm_rank, (MPI_Comm comm, int* rank))
MINIMPI_DECLARE(int, Comm_size, (MPI_Comm comm, int* size))
MINIMPI_DECLARE(int, Comm_dup, (MPI_Comm comm, MPI_Comm* newcomm))
/* Endpoints communicators (the MPI endpoints proposal; minimpi extension):
 * collective over `parent`; this process (or this endpoint, when `parent` is
 * itself an endpoints communicator) gets `my_num_ep` handles (0 allowed) of
 * one new communicator, each a rank of its own with a private VCI. Ranks are
 * ordered by parent rank, then by handle index. */
#define MINIMPI_HAS_ENDPOINTS 1
MINIMPIX_DECLARE(int, Comm_create_endpoints,
                 (MPI_Comm parent, int my_num_ep, MPI_Info info,
                  MPI_Comm out_comms[]))
MINIMPI_DECLARE(int, Comm_split,
                (MPI_Comm comm, int color, int key, MPI_Comm* newcomm))
MINIMPI_DECLARE(int, Comm_free, (MPI_Comm * comm))
MINIMPI_DECLARE(int, Comm_compare,
                (MPI_Comm comm1, MPI_Comm comm2, int* result))
MINIMPI_DECLARE(int, Barrier, (MPI_Comm comm))

/* Collectives (blocking). */
MINIMPI_DECLARE(int, Bcast,
                (void* buffer, int count, MPI_Datatype datatype, int root,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Reduce,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
MINIMPI_DECLARE(int, Allreduce,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MINIMPI_DECLARE(int, Gather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Gatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm))
MINIMPI_DECLARE(int, Scatter,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Scatterv,
                (const void* sendbuf, const int sendcounts[],
                 const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MINIMPI_DECLARE(int, Allgather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Allgatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Alltoall,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Alltoallv,
                (const void* sendbuf, const int sendcounts[],
                 const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Alltoallw,
                (const void* sendbuf, const int sendcounts[],
                 const int sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const int recvcounts[], const int rdispls[],
                 const MPI_Datatype recvtypes[], MPI_Comm comm))
MINIMPI_DECLARE(int, Reduce_scatter,
                (const void* sendbuf, void* recvbuf, const int recvcounts[],
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MINIMPI_DECLARE(int, Reduce_scatter_block,
                (const void* sendbuf, void* recvbuf, int recvcount,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MINIMPI_DECLARE(int, Scan,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MINIMPI_DECLARE(int, Exscan,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))

/* Collectives (nonblocking). */
MINIMPI_DECLARE(int, Ibarrier, (MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ibcast,
                (void* buffer, int count, MPI_Datatype datatype, int root,
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ireduce,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Iallreduce,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Igather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Igatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Iscatter,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Iscatterv,
                (const void* sendbuf, const int sendcounts[],
                 const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Iallgather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Iallgatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ialltoall,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ialltoallv,
                (const void* sendbuf, const int sendcounts[],
                 const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ialltoallw,
                (const void* sendbuf, const int sendcounts[],
                 const int sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const int recvcounts[], const int rdispls[],
                 const MPI_Datatype recvtypes[], MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Ireduce_scatter,
                (const void* sendbuf, void* recvbuf, const int recvcounts[],
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Ireduce_scatter_block,
                (const void* sendbuf, void* recvbuf, int recvcount,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Iscan,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Iexscan,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request))

/* Reduction operations. */
MINIMPI_DECLARE(int, Op_create,
                (MPI_User_function * user_fn, int commute, MPI_Op* op))
MINIMPI_DECLARE(int, Op_free, (MPI_Op * op))
MINIMPI_DECLARE(int, Op_commutative, (MPI_Op op, int* commute))
MINIMPI_DECLARE(int, Reduce_local,
                (const void* inbuf, void* inoutbuf, int count,
                 MPI_Datatype datatype, MPI_Op op))

/* Point-to-point. */
MINIMPI_DECLARE(int, Send,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm))
MINIMPI_DECLARE(int, Ssend,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm))
MINIMPI_DECLARE(int, Rsend,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm))
MINIMPI_DECLARE(int, Recv,
                (void* buf, int count, MPI_Datatype datatype, int source,
                 int tag, MPI_Comm comm, MPI_Status* status))
MINIMPI_DECLARE(int, Isend,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Issend,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Irsend,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Irecv,
                (void* buf, int count, MPI_Datatype datatype, int source,
                 int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Sendrecv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 int dest, int sendtag, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                 MPI_Status* status))
MINIMPI_DECLARE(int, Sendrecv_replace,
                (void* buf, int count, MPI_Datatype datatype, int dest,
                 int sendtag, int source, int recvtag, MPI_Comm comm,
                 MPI_Status* status))
MINIMPI_DECLARE(int, Probe,
                (int source, int tag, MPI_Comm comm, MPI_Status* status))
MINIMPI_DECLARE(int, Iprobe,
                (int source, int tag, MPI_Comm comm, int* flag,
                 MPI_Status* status))
MINIMPI_DECLARE(int, Mprobe,
                (int source, int tag, MPI_Comm comm, MPI_Message* message,
                 MPI_Status* status))
MINIMPI_DECLARE(int, Improbe,
                (int source, int tag, MPI_Comm comm, int* flag,
                 MPI_Message* message, MPI_Status* status))
MINIMPI_DECLARE(int, Mrecv,
                (void* buf, int count, MPI_Datatype datatype,
                 MPI_Message* message, MPI_Status* status))
MINIMPI_DECLARE(int, Imrecv,
                (void* buf, int count, MPI_Datatype datatype,
                 MPI_Message* message, MPI_Request* request))
MINIMPI_DECLARE(int, Send_init,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ssend_init,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Rsend_init,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Recv_init,
                (void* buf, int count, MPI_Datatype datatype, int source,
                 int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Start, (MPI_Request * request))
/* Partitioned communication (MPI-4). */
/* MPI-4.1 (and the standard ABI) give a partition's count an int; the
 * large-count forms are the _c calls. */
MINIMPI_DECLARE(int, Psend_init,
                (const void* buf, int partitions, int count,
                 MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                 MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Precv_init,
                (void* buf, int partitions, int count, MPI_Datatype datatype,
                 int source, int tag, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Psend_init_c,
                (const void* buf, int partitions, MPI_Count count,
                 MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                 MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Precv_init_c,
                (void* buf, int partitions, MPI_Count count,
                 MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                 MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Pready, (int partition, MPI_Request request))
MINIMPI_DECLARE(int, Pready_range,
                (int partition_low, int partition_high, MPI_Request request))
MINIMPI_DECLARE(int, Pready_list,
                (int length, const int array_of_partitions[],
                 MPI_Request request))
MINIMPI_DECLARE(int, Parrived, (MPI_Request request, int partition, int* flag))
MINIMPI_DECLARE(int, Startall, (int count, MPI_Request array_of_requests[]))

/* Requests and completion. */
MINIMPI_DECLARE(int, Request_free, (MPI_Request * request))
MINIMPI_DECLARE(int, Cancel, (MPI_Request * request))
MINIMPI_DECLARE(int, Test_cancelled, (const MPI_Status* status, int* flag))
MINIMPI_DECLARE(int, Wait, (MPI_Request * request, MPI_Status* status))
MINIMPI_DECLARE(int, Waitall,
                (int count, MPI_Request array_of_requests[],
                 MPI_Status array_of_statuses[]))
MINIMPI_DECLARE(int, Waitany,
                (int count, MPI_Request array_of_requests[], int* index,
                 MPI_Status* status))
MINIMPI_DECLARE(int, Waitsome,
                (int incount, MPI_Request array_of_requests[], int* outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]))
MINIMPI_DECLARE(int, Test,
                (MPI_Request * request, int* flag, MPI_Status* status))
MINIMPI_DECLARE(int, Testall,
                (int count, MPI_Request array_of_requests[], int* flag,
                 MPI_Status array_of_statuses[]))
MINIMPI_DECLARE(int, Testany,
                (int count, MPI_Request array_of_requests[], int* index,
                 int* flag, MPI_Status* status))
MINIMPI_DECLARE(int, Testsome,
                (int incount, MPI_Request array_of_requests[], int* outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]))
MINIMPI_DECLARE(int, Request_get_status,
                (MPI_Request request, int* flag, MPI_Status* status))
MINIMPI_DECLARE(int, Get_count,
                (const MPI_Status* status, MPI_Datatype datatype, int* count))
MINIMPI_DECLARE(int, Get_elements,
                (const MPI_Status* status, MPI_Datatype datatype, int* count))

/* Datatypes. */
MINIMPI_DECLARE(int, Type_size, (MPI_Datatype datatype, int* size))
MINIMPI_DECLARE(int, Type_get_extent,
                (MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent))

/* ---- Groups, communicator creation, topologies, attributes, info -------
 * (issue 8; one block so it merges as a whole). Constant values are those
 * of the MPI-5 standard ABI (mpi_abi.h). */

/* MPI_Topo_test. */
enum { MPI_CART = 211, MPI_GRAPH = 212, MPI_DIST_GRAPH = 213 };

/* MPI_Comm_split_type. */
enum {
  MPI_COMM_TYPE_SHARED = 221,
  MPI_COMM_TYPE_HW_UNGUIDED = 222,
  MPI_COMM_TYPE_HW_GUIDED = 223,
  MPI_COMM_TYPE_RESOURCE_GUIDED = 224 /* MPI-4.1 */
};

/* Predefined attribute keys of MPI_COMM_WORLD. */
enum {
  MPI_TAG_UB = 501,
  MPI_IO = 502,
  MPI_HOST = 503,
  MPI_WTIME_IS_GLOBAL = 504,
  MPI_UNIVERSE_SIZE = 505,
  MPI_APPNUM = 506,
  MPI_LASTUSEDCODE = 507
};

/* Attribute callbacks. attribute_val_out is the address of a void*. */
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval,
                                        void* extra_state,
                                        void* attribute_val_in,
                                        void* attribute_val_out, int* flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval,
                                          void* attribute_val,
                                          void* extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval,
                                        void* extra_state,
                                        void* attribute_val_in,
                                        void* attribute_val_out, int* flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype,
                                          int type_keyval, void* attribute_val,
                                          void* extra_state);
/* The MPI-1 names (deprecated; old programs and test suites use them). */
typedef MPI_Comm_copy_attr_function MPI_Copy_function;
typedef MPI_Comm_delete_attr_function MPI_Delete_function;

/* Predefined callbacks: sentinels the library recognizes (never called).
 * NULL_COPY: the attribute is not copied; DUP: its value is copied as is;
 * NULL_DELETE: nothing to do. */
#define MPI_NULL_COPY_FN ((MPI_Copy_function*)0x0)
#define MPI_DUP_FN ((MPI_Copy_function*)0x1)
#define MPI_NULL_DELETE_FN ((MPI_Delete_function*)0x0)
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function*)0x0)
#define MPI_COMM_DUP_FN ((MPI_Comm_copy_attr_function*)0x1)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function*)0x0)
#define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function*)0x0)
#define MPI_TYPE_DUP_FN ((MPI_Type_copy_attr_function*)0x1)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function*)0x0)

/* Groups. */
MINIMPI_DECLARE(int, Comm_group, (MPI_Comm comm, MPI_Group* group))
MINIMPI_DECLARE(int, Group_size, (MPI_Group group, int* size))
MINIMPI_DECLARE(int, Group_rank, (MPI_Group group, int* rank))
MINIMPI_DECLARE(int, Group_translate_ranks,
                (MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                 int ranks2[]))
MINIMPI_DECLARE(int, Group_compare,
                (MPI_Group group1, MPI_Group group2, int* result))
MINIMPI_DECLARE(int, Group_union,
                (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
MINIMPI_DECLARE(int, Group_intersection,
                (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
MINIMPI_DECLARE(int, Group_difference,
                (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
MINIMPI_DECLARE(int, Group_incl,
                (MPI_Group group, int n, const int ranks[],
                 MPI_Group* newgroup))
MINIMPI_DECLARE(int, Group_excl,
                (MPI_Group group, int n, const int ranks[],
                 MPI_Group* newgroup))
MINIMPI_DECLARE(int, Group_range_incl,
                (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup))
MINIMPI_DECLARE(int, Group_range_excl,
                (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup))
MINIMPI_DECLARE(int, Group_free, (MPI_Group * group))

/* Communicator creation and inquiry. */
MINIMPI_DECLARE(int, Comm_create,
                (MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm))
MINIMPI_DECLARE(int, Comm_create_group,
                (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm))
MINIMPI_DECLARE(int, Comm_split_type,
                (MPI_Comm comm, int split_type, int key, MPI_Info info,
                 MPI_Comm* newcomm))
MINIMPI_DECLARE(int, Comm_dup_with_info,
                (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm))
MINIMPI_DECLARE(int, Comm_idup,
                (MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request))
MINIMPI_DECLARE(int, Comm_idup_with_info,
                (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Comm_set_name, (MPI_Comm comm, const char* comm_name))
MINIMPI_DECLARE(int, Comm_get_name,
                (MPI_Comm comm, char* comm_name, int* resultlen))
MINIMPI_DECLARE(int, Comm_test_inter, (MPI_Comm comm, int* flag))
MINIMPI_DECLARE(int, Comm_remote_size, (MPI_Comm comm, int* size))
MINIMPI_DECLARE(int, Comm_remote_group, (MPI_Comm comm, MPI_Group* group))
MINIMPI_DECLARE(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
MINIMPI_DECLARE(int, Comm_get_info, (MPI_Comm comm, MPI_Info* info_used))

/* Process topologies. Weight arrays are declared as pointers, not arrays:
 * MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are small sentinel addresses, and
 * GCC warns about reading an array argument at such an address. */
MINIMPI_DECLARE(int, Dims_create, (int nnodes, int ndims, int dims[]))
MINIMPI_DECLARE(int, Cart_create,
                (MPI_Comm comm_old, int ndims, const int dims[],
                 const int periods[], int reorder, MPI_Comm* comm_cart))
MINIMPI_DECLARE(int, Cart_coords,
                (MPI_Comm comm, int rank, int maxdims, int coords[]))
MINIMPI_DECLARE(int, Cart_rank, (MPI_Comm comm, const int coords[], int* rank))
MINIMPI_DECLARE(int, Cart_shift,
                (MPI_Comm comm, int direction, int disp, int* rank_source,
                 int* rank_dest))
MINIMPI_DECLARE(int, Cart_sub,
                (MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm))
MINIMPI_DECLARE(int, Cart_get,
                (MPI_Comm comm, int maxdims, int dims[], int periods[],
                 int coords[]))
MINIMPI_DECLARE(int, Cart_map,
                (MPI_Comm comm, int ndims, const int dims[],
                 const int periods[], int* newrank))
MINIMPI_DECLARE(int, Cartdim_get, (MPI_Comm comm, int* ndims))
MINIMPI_DECLARE(int, Topo_test, (MPI_Comm comm, int* status))
MINIMPI_DECLARE(int, Graph_create,
                (MPI_Comm comm_old, int nnodes, const int index[],
                 const int edges[], int reorder, MPI_Comm* comm_graph))
MINIMPI_DECLARE(int, Graph_get,
                (MPI_Comm comm, int maxindex, int maxedges, int index[],
                 int edges[]))
MINIMPI_DECLARE(int, Graphdims_get, (MPI_Comm comm, int* nnodes, int* nedges))
MINIMPI_DECLARE(int, Graph_neighbors,
                (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]))
MINIMPI_DECLARE(int, Graph_neighbors_count,
                (MPI_Comm comm, int rank, int* nneighbors))
MINIMPI_DECLARE(int, Graph_map,
                (MPI_Comm comm, int nnodes, const int index[],
                 const int edges[], int* newrank))
MINIMPI_DECLARE(int, Dist_graph_create_adjacent,
                (MPI_Comm comm_old, int indegree, const int sources[],
                 const int* sourceweights, int outdegree,
                 const int destinations[], const int* destweights,
                 MPI_Info info, int reorder, MPI_Comm* comm_dist_graph))
MINIMPI_DECLARE(int, Dist_graph_create,
                (MPI_Comm comm_old, int n, const int sources[],
                 const int degrees[], const int destinations[],
                 const int* weights, MPI_Info info, int reorder,
                 MPI_Comm* comm_dist_graph))
MINIMPI_DECLARE(int, Dist_graph_neighbors,
                (MPI_Comm comm, int maxindegree, int sources[],
                 int* sourceweights, int maxoutdegree, int destinations[],
                 int* destweights))
MINIMPI_DECLARE(int, Dist_graph_neighbors_count,
                (MPI_Comm comm, int* indegree, int* outdegree, int* weighted))

/* Neighbourhood collectives (blocking and nonblocking). */
MINIMPI_DECLARE(int, Neighbor_allgather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Neighbor_allgatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Neighbor_alltoall,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Neighbor_alltoallv,
                (const void* sendbuf, const int sendcounts[],
                 const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Neighbor_alltoallw,
                (const void* sendbuf, const int sendcounts[],
                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const int recvcounts[],
                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Ineighbor_allgather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ineighbor_allgatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ineighbor_alltoall,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ineighbor_alltoallv,
                (const void* sendbuf, const int sendcounts[],
                 const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ineighbor_alltoallw,
                (const void* sendbuf, const int sendcounts[],
                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const int recvcounts[],
                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm, MPI_Request* request))

/* Persistent collectives (MPI-4.0 section 6.13): started with MPI_Start. */
MINIMPI_DECLARE(int, Barrier_init,
                (MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Bcast_init,
                (void* buffer, int count, MPI_Datatype datatype, int root,
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Alltoallw_init,
                (const void* sendbuf, const int sendcounts[],
                 const int sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const int recvcounts[], const int rdispls[],
                 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Gather_init,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Gatherv_init,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Scatter_init,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Scatterv_init,
                (const void* sendbuf, const int sendcounts[],
                 const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Allgather_init,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Allgatherv_init,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Alltoall_init,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Alltoallv_init,
                (const void* sendbuf, const int sendcounts[],
                 const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Reduce_init,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                 MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Allreduce_init,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Reduce_scatter_init,
                (const void* sendbuf, void* recvbuf, const int recvcounts[],
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Reduce_scatter_block_init,
                (const void* sendbuf, void* recvbuf, int recvcount,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Scan_init,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Exscan_init,
                (const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_allgather_init,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_allgatherv_init,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_alltoall_init,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_alltoallv_init,
                (const void* sendbuf, const int sendcounts[],
                 const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_alltoallw_init,
                (const void* sendbuf, const int sendcounts[],
                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const int recvcounts[],
                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))

/* Large-count collectives (MPI-4.0): MPI_Count counts, MPI_Aint displacements.
 */
MINIMPI_DECLARE(int, Bcast_c,
                (void* buffer, MPI_Count count, MPI_Datatype datatype, int root,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Ibcast_c,
                (void* buffer, MPI_Count count, MPI_Datatype datatype, int root,
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Bcast_init_c,
                (void* buffer, MPI_Count count, MPI_Datatype datatype, int root,
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Alltoallw_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const MPI_Count recvcounts[],
                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Ialltoallw_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const MPI_Count recvcounts[],
                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Gather_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm))
MINIMPI_DECLARE(int, Igather_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Gatherv_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm))
MINIMPI_DECLARE(int, Igatherv_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Scatter_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm))
MINIMPI_DECLARE(int, Iscatter_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Scatterv_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint displs[], MPI_Datatype sendtype, void* recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Iscatterv_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint displs[], MPI_Datatype sendtype, void* recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Allgather_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Iallgather_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Allgatherv_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[],
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Iallgatherv_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Alltoall_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Ialltoall_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Alltoallv_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Ialltoallv_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Alltoallw_init_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const MPI_Count recvcounts[],
                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Gather_init_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Gatherv_init_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Scatter_init_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Scatterv_init_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint displs[], MPI_Datatype sendtype, void* recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Allgather_init_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Allgatherv_init_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Alltoall_init_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Alltoallv_init_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Reduce_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
MINIMPI_DECLARE(int, Ireduce_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Allreduce_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MINIMPI_DECLARE(int, Iallreduce_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Reduce_scatter_c,
                (const void* sendbuf, void* recvbuf,
                 const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Ireduce_scatter_c,
                (const void* sendbuf, void* recvbuf,
                 const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Reduce_scatter_block_c,
                (const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MINIMPI_DECLARE(int, Ireduce_scatter_block_c,
                (const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Scan_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MINIMPI_DECLARE(int, Iscan_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Exscan_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MINIMPI_DECLARE(int, Iexscan_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Reduce_init_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                 MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Allreduce_init_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Reduce_scatter_init_c,
                (const void* sendbuf, void* recvbuf,
                 const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MINIMPI_DECLARE(int, Reduce_scatter_block_init_c,
                (const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Scan_init_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Exscan_init_c,
                (const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_allgather_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Ineighbor_allgather_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_allgatherv_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[],
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Ineighbor_allgatherv_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_alltoall_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Ineighbor_alltoall_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_alltoallv_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm))
MINIMPI_DECLARE(int, Ineighbor_alltoallv_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_alltoallw_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const MPI_Count recvcounts[],
                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Ineighbor_alltoallw_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const MPI_Count recvcounts[],
                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_allgather_init_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_allgatherv_init_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_alltoall_init_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_alltoallv_init_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Neighbor_alltoallw_init_c,
                (const void* sendbuf, const MPI_Count sendcounts[],
                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const MPI_Count recvcounts[],
                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm, MPI_Info info, MPI_Request* request))

/* Attributes on communicators, and the MPI-1 names. */
MINIMPI_DECLARE(int, Comm_create_keyval,
                (MPI_Comm_copy_attr_function * comm_copy_attr_fn,
                 MPI_Comm_delete_attr_function* comm_delete_attr_fn,
                 int* comm_keyval, void* extra_state))
MINIMPI_DECLARE(int, Comm_free_keyval, (int* comm_keyval))
MINIMPI_DECLARE(int, Comm_set_attr,
                (MPI_Comm comm, int comm_keyval, void* attribute_val))
MINIMPI_DECLARE(int, Comm_get_attr,
                (MPI_Comm comm, int comm_keyval, void* attribute_val,
                 int* flag))
MINIMPI_DECLARE(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval))
MINIMPI_DECLARE(int, Keyval_create,
                (MPI_Copy_function * copy_fn, MPI_Delete_function* delete_fn,
                 int* keyval, void* extra_state))
MINIMPI_DECLARE(int, Keyval_free, (int* keyval))
MINIMPI_DECLARE(int, Attr_put, (MPI_Comm comm, int keyval, void* attribute_val))
MINIMPI_DECLARE(int, Attr_get,
                (MPI_Comm comm, int keyval, void* attribute_val, int* flag))
MINIMPI_DECLARE(int, Attr_delete, (MPI_Comm comm, int keyval))

/* Info objects (valid before MPI_Init and after MPI_Finalize). */
MINIMPI_DECLARE(int, Info_create, (MPI_Info * info))
MINIMPI_DECLARE(int, Info_set,
                (MPI_Info info, const char* key, const char* value))
MINIMPI_DECLARE(int, Info_get,
                (MPI_Info info, const char* key, int valuelen, char* value,
                 int* flag))
MINIMPI_DECLARE(int, Info_get_string,
                (MPI_Info info, const char* key, int* buflen, char* value,
                 int* flag))
MINIMPI_DECLARE(int, Info_get_valuelen,
                (MPI_Info info, const char* key, int* valuelen, int* flag))
MINIMPI_DECLARE(int, Info_delete, (MPI_Info info, const char* key))
MINIMPI_DECLARE(int, Info_dup, (MPI_Info info, MPI_Info* newinfo))
MINIMPI_DECLARE(int, Info_free, (MPI_Info * info))
MINIMPI_DECLARE(int, Info_get_nkeys, (MPI_Info info, int* nkeys))
MINIMPI_DECLARE(int, Info_get_nthkey, (MPI_Info info, int n, char* key))
MINIMPI_DECLARE(int, Info_create_env, (int argc, char* argv[], MPI_Info* info))

/* Memory and status objects. */
MINIMPI_DECLARE(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void* baseptr))
MINIMPI_DECLARE(int, Free_mem, (void* base))
MINIMPI_DECLARE(int, Status_set_elements,
                (MPI_Status * status, MPI_Datatype datatype, int count))
MINIMPI_DECLARE(int, Status_set_elements_x,
                (MPI_Status * status, MPI_Datatype datatype, MPI_Count count))
MINIMPI_DECLARE(int, Status_set_cancelled, (MPI_Status * status, int flag))
MINIMPI_DECLARE(int, Status_set_source, (MPI_Status * status, int source))
MINIMPI_DECLARE(int, Status_set_tag, (MPI_Status * status, int tag))
MINIMPI_DECLARE(int, Status_set_error, (MPI_Status * status, int error))
MINIMPI_DECLARE(int, Status_get_source, (const MPI_Status* status, int* source))
MINIMPI_DECLARE(int, Status_get_tag, (const MPI_Status* status, int* tag))
MINIMPI_DECLARE(int, Status_get_error, (const MPI_Status* status, int* error))
/* Generalized requests (MPI-4.1 section 13.2). */
typedef int MPI_Grequest_query_function(void* extra_state, MPI_Status* status);
typedef int MPI_Grequest_free_function(void* extra_state);
typedef int MPI_Grequest_cancel_function(void* extra_state, int complete);
MINIMPI_DECLARE(int, Grequest_start,
                (MPI_Grequest_query_function * query_fn,
                 MPI_Grequest_free_function* free_fn,
                 MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Grequest_complete, (MPI_Request request))
/* ---- end of issue 8's block --------------------------------------------- */
/* ---- Datatypes (typebind): constructors, decoding, queries, packing. Every
 * constructor and query that MPI-4.1 gives a large-count twin has its _c
 * form here too. */
MINIMPI_DECLARE(int, Type_contiguous,
                (int count, MPI_Datatype oldtype, MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_contiguous_c,
                (MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_vector,
                (int count, int blocklength, int stride, MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_vector_c,
                (MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                 MPI_Datatype oldtype, MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_hvector,
                (int count, int blocklength, MPI_Aint stride,
                 MPI_Datatype oldtype, MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_hvector_c,
                (MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                 MPI_Datatype oldtype, MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_indexed,
                (int count, const int array_of_blocklengths[],
                 const int array_of_displacements[], MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_indexed_c,
                (MPI_Count count, const MPI_Count array_of_blocklengths[],
                 const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_hindexed,
                (int count, const int array_of_blocklengths[],
                 const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_hindexed_c,
                (MPI_Count count, const MPI_Count array_of_blocklengths[],
                 const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_indexed_block,
                (int count, int blocklength, const int array_of_displacements[],
                 MPI_Datatype oldtype, MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_indexed_block_c,
                (MPI_Count count, MPI_Count blocklength,
                 const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_hindexed_block,
                (int count, int blocklength,
                 const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_hindexed_block_c,
                (MPI_Count count, MPI_Count blocklength,
                 const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_struct,
                (int count, const int array_of_blocklengths[],
                 const MPI_Aint array_of_displacements[],
                 const MPI_Datatype array_of_types[], MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_struct_c,
                (MPI_Count count, const MPI_Count array_of_blocklengths[],
                 const MPI_Count array_of_displacements[],
                 const MPI_Datatype array_of_types[], MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_subarray,
                (int ndims, const int array_of_sizes[],
                 const int array_of_subsizes[], const int array_of_starts[],
                 int order, MPI_Datatype oldtype, MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_subarray_c,
                (int ndims, const MPI_Count array_of_sizes[],
                 const MPI_Count array_of_subsizes[],
                 const MPI_Count array_of_starts[], int order,
                 MPI_Datatype oldtype, MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_darray,
                (int size, int rank, int ndims, const int array_of_gsizes[],
                 const int array_of_distribs[], const int array_of_dargs[],
                 const int array_of_psizes[], int order, MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_darray_c,
                (int size, int rank, int ndims,
                 const MPI_Count array_of_gsizes[],
                 const int array_of_distribs[], const int array_of_dargs[],
                 const int array_of_psizes[], int order, MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_resized,
                (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_create_resized_c,
                (MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                 MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype* newtype))
MINIMPI_DECLARE(int, Type_commit, (MPI_Datatype * datatype))
MINIMPI_DECLARE(int, Type_free, (MPI_Datatype * datatype))
MINIMPI_DECLARE(int, Type_get_envelope,
                (MPI_Datatype datatype, int* num_integers, int* num_addresses,
                 int* num_datatypes, int* combiner))
MINIMPI_DECLARE(int, Type_get_envelope_c,
                (MPI_Datatype datatype, MPI_Count* num_integers,
                 MPI_Count* num_addresses, MPI_Count* num_large_counts,
                 MPI_Count* num_datatypes, int* combiner))
MINIMPI_DECLARE(int, Type_get_contents,
                (MPI_Datatype datatype, int max_integers, int max_addresses,
                 int max_datatypes, int array_of_integers[],
                 MPI_Aint array_of_addresses[],
                 MPI_Datatype array_of_datatypes[]))
MINIMPI_DECLARE(int, Type_get_contents_c,
                (MPI_Datatype datatype, MPI_Count max_integers,
                 MPI_Count max_addresses, MPI_Count max_large_counts,
                 MPI_Count max_datatypes, int array_of_integers[],
                 MPI_Aint array_of_addresses[],
                 MPI_Count array_of_large_counts[],
                 MPI_Datatype array_of_datatypes[]))
MINIMPI_DECLARE(int, Type_size_x, (MPI_Datatype datatype, MPI_Count* size))
MINIMPI_DECLARE(int, Type_size_c, (MPI_Datatype datatype, MPI_Count* size))
MINIMPI_DECLARE(int, Type_get_extent_x,
                (MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent))
MINIMPI_DECLARE(int, Type_get_extent_c,
                (MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent))
MINIMPI_DECLARE(int, Type_get_true_extent,
                (MPI_Datatype datatype, MPI_Aint* true_lb,
                 MPI_Aint* true_extent))
MINIMPI_DECLARE(int, Type_get_true_extent_x,
                (MPI_Datatype datatype, MPI_Count* true_lb,
                 MPI_Count* true_extent))
MINIMPI_DECLARE(int, Type_get_true_extent_c,
                (MPI_Datatype datatype, MPI_Count* true_lb,
                 MPI_Count* true_extent))
MINIMPI_DECLARE(int, Get_count_c,
                (const MPI_Status* status, MPI_Datatype datatype,
                 MPI_Count* count))
MINIMPI_DECLARE(int, Get_elements_x,
                (const MPI_Status* status, MPI_Datatype datatype,
                 MPI_Count* count))
MINIMPI_DECLARE(int, Get_elements_c,
                (const MPI_Status* status, MPI_Datatype datatype,
                 MPI_Count* count))
MINIMPI_DECLARE(int, Type_get_name,
                (MPI_Datatype datatype, char* type_name, int* resultlen))
MINIMPI_DECLARE(int, Type_set_name,
                (MPI_Datatype datatype, const char* type_name))
MINIMPI_DECLARE(int, Type_match_size,
                (int typeclass, int size, MPI_Datatype* datatype))
MINIMPI_DECLARE(int, Type_get_value_index,
                (MPI_Datatype value_type, MPI_Datatype index_type,
                 MPI_Datatype* pair_type))
MINIMPI_DECLARE(int, Get_address, (const void* location, MPI_Aint* address))
MINIMPI_DECLARE(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
MINIMPI_DECLARE(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))
MINIMPI_DECLARE(int, Pack,
                (const void* inbuf, int incount, MPI_Datatype datatype,
                 void* outbuf, int outsize, int* position, MPI_Comm comm))
MINIMPI_DECLARE(int, Pack_c,
                (const void* inbuf, MPI_Count incount, MPI_Datatype datatype,
                 void* outbuf, MPI_Count outsize, MPI_Count* position,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Unpack,
                (const void* inbuf, int insize, int* position, void* outbuf,
                 int outcount, MPI_Datatype datatype, MPI_Comm comm))
MINIMPI_DECLARE(int, Unpack_c,
                (const void* inbuf, MPI_Count insize, MPI_Count* position,
                 void* outbuf, MPI_Count outcount, MPI_Datatype datatype,
                 MPI_Comm comm))
MINIMPI_DECLARE(int, Pack_size,
                (int incount, MPI_Datatype datatype, MPI_Comm comm, int* size))
MINIMPI_DECLARE(int, Pack_size_c,
                (MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                 MPI_Count* size))
MINIMPI_DECLARE(int, Pack_external,
                (const char datarep[], const void* inbuf, int incount,
                 MPI_Datatype datatype, void* outbuf, MPI_Aint outsize,
                 MPI_Aint* position))
MINIMPI_DECLARE(int, Pack_external_c,
                (const char datarep[], const void* inbuf, MPI_Count incount,
                 MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
                 MPI_Count* position))
MINIMPI_DECLARE(int, Unpack_external,
                (const char datarep[], const void* inbuf, MPI_Aint insize,
                 MPI_Aint* position, void* outbuf, int outcount,
                 MPI_Datatype datatype))
MINIMPI_DECLARE(int, Unpack_external_c,
                (const char datarep[], const void* inbuf, MPI_Count insize,
                 MPI_Count* position, void* outbuf, MPI_Count outcount,
                 MPI_Datatype datatype))
MINIMPI_DECLARE(int, Pack_external_size,
                (const char datarep[], int incount, MPI_Datatype datatype,
                 MPI_Aint* size))
MINIMPI_DECLARE(int, Pack_external_size_c,
                (const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                 MPI_Count* size))
/* ---- end of the datatype block (typebind) */

/* Intercommunicators. */
MINIMPI_DECLARE(int, Intercomm_create,
                (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                 int remote_leader, int tag, MPI_Comm* newintercomm))
MINIMPI_DECLARE(int, Intercomm_merge,
                (MPI_Comm intercomm, int high, MPI_Comm* newintracomm))

/* Dynamic processes (MPI-4.1 11.8-11.10): spawning through the launcher's
 * PMIx server, ports, joining over a socket, name publishing. */
MINIMPI_DECLARE(int, Comm_spawn,
                (const char* command, char* argv[], int maxprocs, MPI_Info info,
                 int root, MPI_Comm comm, MPI_Comm* intercomm,
                 int array_of_errcodes[]))
MINIMPI_DECLARE(int, Comm_spawn_multiple,
                (int count, char* array_of_commands[], char** array_of_argv[],
                 const int array_of_maxprocs[], const MPI_Info array_of_info[],
                 int root, MPI_Comm comm, MPI_Comm* intercomm,
                 int array_of_errcodes[]))
MINIMPI_DECLARE(int, Comm_get_parent, (MPI_Comm * parent))
MINIMPI_DECLARE(int, Open_port, (MPI_Info info, char* port_name))
MINIMPI_DECLARE(int, Close_port, (const char* port_name))
MINIMPI_DECLARE(int, Comm_accept,
                (const char* port_name, MPI_Info info, int root, MPI_Comm comm,
                 MPI_Comm* newcomm))
MINIMPI_DECLARE(int, Comm_connect,
                (const char* port_name, MPI_Info info, int root, MPI_Comm comm,
                 MPI_Comm* newcomm))
MINIMPI_DECLARE(int, Comm_join, (int fd, MPI_Comm* intercomm))
MINIMPI_DECLARE(int, Comm_disconnect, (MPI_Comm * comm))
MINIMPI_DECLARE(int, Publish_name,
                (const char* service_name, MPI_Info info,
                 const char* port_name))
MINIMPI_DECLARE(int, Lookup_name,
                (const char* service_name, MPI_Info info, char* port_name))
MINIMPI_DECLARE(int, Unpublish_name,
                (const char* service_name, MPI_Info info,
                 const char* port_name))

/* ---- compat: what real programs and MPICH's test suite need beyond the
 * blocks above: attributes on datatypes, windows (declared and checked;
 * one-sided communication itself is later work), the MPI-1 calls MPI-3.0
 * removed, buffered sends, MPI_Isendrecv(_replace) and handle conversions.
 * Constant values are those of the MPI-5 standard ABI (mpi_abi.h). */

/* Attributes on datatypes (the callback types and MPI_TYPE_*_FN are in
 * issue 8's block). */
MINIMPI_DECLARE(int, Type_create_keyval,
                (MPI_Type_copy_attr_function * type_copy_attr_fn,
                 MPI_Type_delete_attr_function* type_delete_attr_fn,
                 int* type_keyval, void* extra_state))
MINIMPI_DECLARE(int, Type_free_keyval, (int* type_keyval))
MINIMPI_DECLARE(int, Type_set_attr,
                (MPI_Datatype datatype, int type_keyval, void* attribute_val))
MINIMPI_DECLARE(int, Type_get_attr,
                (MPI_Datatype datatype, int type_keyval, void* attribute_val,
                 int* flag))
MINIMPI_DECLARE(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval))

/* Windows and one-sided communication (mpi/rma). Dynamic windows
 * (MPI_Win_create_dynamic) are not implemented yet: that call fails with
 * MPI_ERR_UNSUPPORTED_OPERATION. */
enum {
  MPI_WIN_BASE = 601,
  MPI_WIN_DISP_UNIT = 602,
  MPI_WIN_SIZE = 603,
  MPI_WIN_CREATE_FLAVOR = 604,
  MPI_WIN_MODEL = 605
};
enum {
  MPI_LOCK_EXCLUSIVE = 301,
  MPI_LOCK_SHARED = 302,
  MPI_WIN_FLAVOR_CREATE = 311,
  MPI_WIN_FLAVOR_ALLOCATE = 312,
  MPI_WIN_FLAVOR_DYNAMIC = 313,
  MPI_WIN_FLAVOR_SHARED = 314,
  MPI_WIN_UNIFIED = 321,
  MPI_WIN_SEPARATE = 322
};
/* Assertions (MPI_Win_fence, MPI_Win_lock, ...): powers of two. */
enum {
  MPI_MODE_NOCHECK = 1024,
  MPI_MODE_NOPRECEDE = 2048,
  MPI_MODE_NOPUT = 4096,
  MPI_MODE_NOSTORE = 8192,
  MPI_MODE_NOSUCCEED = 16384
};
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval,
                                       void* extra_state,
                                       void* attribute_val_in,
                                       void* attribute_val_out, int* flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval,
                                         void* attribute_val,
                                         void* extra_state);
typedef void MPI_Win_errhandler_function(MPI_Win* win, int* error_code, ...);
/* A session's error handler: called with the session and the error code. */
typedef void MPI_Session_errhandler_function(MPI_Session* session,
                                             int* error_code, ...);

/* Sessions (MPI-4.1 chapter 11): process sets "mpi://WORLD", "mpi://SELF"
   and one "mpix://node/<node name>" per node, names compared without regard
   to case. */
MINIMPI_DECLARE(int, Session_init,
                (MPI_Info info, MPI_Errhandler errhandler,
                 MPI_Session* session))
MINIMPI_DECLARE(int, Session_finalize, (MPI_Session * session))
MINIMPI_DECLARE(int, Session_get_num_psets,
                (MPI_Session session, MPI_Info info, int* npset_names))
MINIMPI_DECLARE(int, Session_get_nth_pset,
                (MPI_Session session, MPI_Info info, int n, int* pset_len,
                 char* pset_name))
MINIMPI_DECLARE(int, Session_get_pset_info,
                (MPI_Session session, const char* pset_name, MPI_Info* info))
MINIMPI_DECLARE(int, Session_get_info,
                (MPI_Session session, MPI_Info* info_used))
MINIMPI_DECLARE(int, Group_from_session_pset,
                (MPI_Session session, const char* pset_name,
                 MPI_Group* newgroup))
MINIMPI_DECLARE(int, Comm_create_from_group,
                (MPI_Group group, const char* stringtag, MPI_Info info,
                 MPI_Errhandler errhandler, MPI_Comm* newcomm))
MINIMPI_DECLARE(int, Intercomm_create_from_groups,
                (MPI_Group local_group, int local_leader,
                 MPI_Group remote_group, int remote_leader,
                 const char* stringtag, MPI_Info info,
                 MPI_Errhandler errhandler, MPI_Comm* newintercomm))
MINIMPI_DECLARE(int, Session_create_errhandler,
                (MPI_Session_errhandler_function * session_errhandler_fn,
                 MPI_Errhandler* errhandler))
MINIMPI_DECLARE(int, Session_set_errhandler,
                (MPI_Session session, MPI_Errhandler errhandler))
MINIMPI_DECLARE(int, Session_get_errhandler,
                (MPI_Session session, MPI_Errhandler* errhandler))
MINIMPI_DECLARE(int, Session_call_errhandler,
                (MPI_Session session, int errorcode))
#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function*)0x0)
#define MPI_WIN_DUP_FN ((MPI_Win_copy_attr_function*)0x1)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function*)0x0)

MINIMPI_DECLARE(int, Win_create,
                (void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                 MPI_Comm comm, MPI_Win* win))
MINIMPI_DECLARE(int, Win_allocate,
                (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                 void* baseptr, MPI_Win* win))
MINIMPI_DECLARE(int, Win_allocate_shared,
                (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                 void* baseptr, MPI_Win* win))
MINIMPI_DECLARE(int, Win_create_dynamic,
                (MPI_Info info, MPI_Comm comm, MPI_Win* win))
MINIMPI_DECLARE(int, Win_free, (MPI_Win * win))
MINIMPI_DECLARE(int, Win_create_keyval,
                (MPI_Win_copy_attr_function * win_copy_attr_fn,
                 MPI_Win_delete_attr_function* win_delete_attr_fn,
                 int* win_keyval, void* extra_state))
MINIMPI_DECLARE(int, Win_free_keyval, (int* win_keyval))
MINIMPI_DECLARE(int, Win_set_attr,
                (MPI_Win win, int win_keyval, void* attribute_val))
MINIMPI_DECLARE(int, Win_get_attr,
                (MPI_Win win, int win_keyval, void* attribute_val, int* flag))
MINIMPI_DECLARE(int, Win_delete_attr, (MPI_Win win, int win_keyval))
MINIMPI_DECLARE(int, Win_set_name, (MPI_Win win, const char* win_name))
MINIMPI_DECLARE(int, Win_get_name,
                (MPI_Win win, char* win_name, int* resultlen))
MINIMPI_DECLARE(int, Win_create_errhandler,
                (MPI_Win_errhandler_function * win_errhandler_fn,
                 MPI_Errhandler* errhandler))
MINIMPI_DECLARE(int, Win_set_errhandler,
                (MPI_Win win, MPI_Errhandler errhandler))
MINIMPI_DECLARE(int, Win_get_errhandler,
                (MPI_Win win, MPI_Errhandler* errhandler))
MINIMPI_DECLARE(int, Win_call_errhandler, (MPI_Win win, int errorcode))
MINIMPI_DECLARE(int, Win_fence, (int assert, MPI_Win win))
MINIMPI_DECLARE(int, Win_lock,
                (int lock_type, int rank, int assert, MPI_Win win))
MINIMPI_DECLARE(int, Win_unlock, (int rank, MPI_Win win))
MINIMPI_DECLARE(int, Win_lock_all, (int assert, MPI_Win win))
MINIMPI_DECLARE(int, Win_unlock_all, (MPI_Win win))
MINIMPI_DECLARE(int, Win_flush, (int rank, MPI_Win win))
MINIMPI_DECLARE(int, Win_flush_all, (MPI_Win win))
MINIMPI_DECLARE(int, Put,
                (const void* origin_addr, int origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPI_Win win))
MINIMPI_DECLARE(int, Get,
                (void* origin_addr, int origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPI_Win win))
MINIMPI_DECLARE(int, Accumulate,
                (const void* origin_addr, int origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MINIMPI_DECLARE(int, Get_accumulate,
                (const void* origin_addr, int origin_count,
                 MPI_Datatype origin_datatype, void* result_addr,
                 int result_count, MPI_Datatype result_datatype,
                 int target_rank, MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MINIMPI_DECLARE(int, Fetch_and_op,
                (const void* origin_addr, void* result_addr,
                 MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                 MPI_Op op, MPI_Win win))
MINIMPI_DECLARE(int, Compare_and_swap,
                (const void* origin_addr, const void* compare_addr,
                 void* result_addr, MPI_Datatype datatype, int target_rank,
                 MPI_Aint target_disp, MPI_Win win))
MINIMPI_DECLARE(int, Rput,
                (const void* origin_addr, int origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPI_Win win,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Rget,
                (void* origin_addr, int origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPI_Win win,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Raccumulate,
                (const void* origin_addr, int origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Rget_accumulate,
                (const void* origin_addr, int origin_count,
                 MPI_Datatype origin_datatype, void* result_addr,
                 int result_count, MPI_Datatype result_datatype,
                 int target_rank, MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Win_shared_query,
                (MPI_Win win, int rank, MPI_Aint* size, int* disp_unit,
                 void* baseptr))
MINIMPI_DECLARE(int, Win_attach, (MPI_Win win, void* base, MPI_Aint size))
MINIMPI_DECLARE(int, Win_detach, (MPI_Win win, const void* base))
MINIMPI_DECLARE(int, Win_get_group, (MPI_Win win, MPI_Group* group))
MINIMPI_DECLARE(int, Win_set_info, (MPI_Win win, MPI_Info info))
MINIMPI_DECLARE(int, Win_get_info, (MPI_Win win, MPI_Info* info_used))
MINIMPI_DECLARE(int, Win_flush_local, (int rank, MPI_Win win))
MINIMPI_DECLARE(int, Win_flush_local_all, (MPI_Win win))
MINIMPI_DECLARE(int, Win_sync, (MPI_Win win))
MINIMPI_DECLARE(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
MINIMPI_DECLARE(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
MINIMPI_DECLARE(int, Win_complete, (MPI_Win win))
MINIMPI_DECLARE(int, Win_wait, (MPI_Win win))
MINIMPI_DECLARE(int, Win_test, (MPI_Win win, int* flag))
/* The large-count forms (MPI-4). */
MINIMPI_DECLARE(int, Win_create_c,
                (void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                 MPI_Comm comm, MPI_Win* win))
MINIMPI_DECLARE(int, Win_allocate_c,
                (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                 MPI_Comm comm, void* baseptr, MPI_Win* win))
MINIMPI_DECLARE(int, Win_allocate_shared_c,
                (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                 MPI_Comm comm, void* baseptr, MPI_Win* win))
MINIMPI_DECLARE(int, Win_shared_query_c,
                (MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit,
                 void* baseptr))
MINIMPI_DECLARE(int, Put_c,
                (const void* origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, MPI_Count target_count,
                 MPI_Datatype target_datatype, MPI_Win win))
MINIMPI_DECLARE(int, Get_c,
                (void* origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, MPI_Count target_count,
                 MPI_Datatype target_datatype, MPI_Win win))
MINIMPI_DECLARE(int, Accumulate_c,
                (const void* origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, MPI_Count target_count,
                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MINIMPI_DECLARE(int, Get_accumulate_c,
                (const void* origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, void* result_addr,
                 MPI_Count result_count, MPI_Datatype result_datatype,
                 int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MINIMPI_DECLARE(int, Rput_c,
                (const void* origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, MPI_Count target_count,
                 MPI_Datatype target_datatype, MPI_Win win,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Rget_c,
                (void* origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, MPI_Count target_count,
                 MPI_Datatype target_datatype, MPI_Win win,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Raccumulate_c,
                (const void* origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, MPI_Count target_count,
                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Rget_accumulate_c,
                (const void* origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, void* result_addr,
                 MPI_Count result_count, MPI_Datatype result_datatype,
                 int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                 MPI_Request* request))

/* The MPI-1 calls MPI-3.0 removed, which old programs and MPICH's test
 * helpers still call. Each behaves as its MPI-2 replacement (named in the
 * comment). The MPI_LB and MPI_UB markers, also removed, are not provided:
 * MPI_Type_create_resized sets bounds. MPI_Handler_function is the MPI-1
 * name of the communicator error handler type. Arrays are declared const,
 * which accepts what MPI-1's non-const declarations did. */
typedef MPI_Comm_errhandler_function MPI_Handler_function;
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
/* MPI_Type_create_hvector */
MINIMPI_DECLARE(int, Type_hvector,
                (int count, int blocklength, MPI_Aint stride,
                 MPI_Datatype oldtype, MPI_Datatype* newtype))
/* MPI_Type_create_hindexed */
MINIMPI_DECLARE(int, Type_hindexed,
                (int count, const int array_of_blocklengths[],
                 const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
/* MPI_Type_create_struct */
MINIMPI_DECLARE(int, Type_struct,
                (int count, const int array_of_blocklengths[],
                 const MPI_Aint array_of_displacements[],
                 const MPI_Datatype array_of_types[], MPI_Datatype* newtype))
/* MPI_Get_address */
MINIMPI_DECLARE(int, Address, (const void* location, MPI_Aint* address))
/* MPI_Type_get_extent: the extent, the lower bound, lb + extent */
MINIMPI_DECLARE(int, Type_extent, (MPI_Datatype datatype, MPI_Aint* extent))
MINIMPI_DECLARE(int, Type_lb, (MPI_Datatype datatype, MPI_Aint* displacement))
MINIMPI_DECLARE(int, Type_ub, (MPI_Datatype datatype, MPI_Aint* displacement))
/* MPI_Comm_create_errhandler, MPI_Comm_set_errhandler,
 * MPI_Comm_get_errhandler */
MINIMPI_DECLARE(int, Errhandler_create,
                (MPI_Handler_function * function, MPI_Errhandler* errhandler))
MINIMPI_DECLARE(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
MINIMPI_DECLARE(int, Errhandler_get,
                (MPI_Comm comm, MPI_Errhandler* errhandler))

/* Buffered sends. The attached buffer belongs to the process; each message
 * takes its packed size plus at most MPI_BSEND_OVERHEAD bytes of it.
 * MPI_BUFFER_AUTOMATIC (MPI-4.1) lets the library find the memory. */
MINIMPI_DECLARE(int, Buffer_attach, (void* buffer, int size))
MINIMPI_DECLARE(int, Buffer_detach, (void* buffer_addr, int* size))
MINIMPI_DECLARE(int, Buffer_flush, (void))
MINIMPI_DECLARE(int, Buffer_iflush, (MPI_Request * request))
MINIMPI_DECLARE(int, Bsend,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm))
MINIMPI_DECLARE(int, Ibsend,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Bsend_init,
                (const void* buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, MPI_Request* request))

/* MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0): one request that
 * completes when both halves have, with the receive's status. */
MINIMPI_DECLARE(int, Isendrecv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 int dest, int sendtag, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Isendrecv_replace,
                (void* buf, int count, MPI_Datatype datatype, int dest,
                 int sendtag, int source, int recvtag, MPI_Comm comm,
                 MPI_Request* request))

/* Large-count forms (MPI-4.0) of point-to-point, buffered sends and local
 * reductions: each is its int twin with MPI_Count counts. */
MINIMPI_DECLARE(int, Send_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm))
MINIMPI_DECLARE(int, Bsend_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm))
MINIMPI_DECLARE(int, Ssend_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm))
MINIMPI_DECLARE(int, Rsend_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm))
MINIMPI_DECLARE(int, Recv_c,
                (void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                 int tag, MPI_Comm comm, MPI_Status* status))
MINIMPI_DECLARE(int, Isend_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ibsend_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Issend_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Irsend_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Irecv_c,
                (void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                 int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Imrecv_c,
                (void* buf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Message* message, MPI_Request* request))
MINIMPI_DECLARE(int, Mrecv_c,
                (void* buf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Message* message, MPI_Status* status))
MINIMPI_DECLARE(int, Send_init_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Bsend_init_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Ssend_init_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Rsend_init_c,
                (const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Recv_init_c,
                (void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                 int tag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Sendrecv_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status* status))
MINIMPI_DECLARE(int, Sendrecv_replace_c,
                (void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                 int sendtag, int source, int recvtag, MPI_Comm comm,
                 MPI_Status* status))
MINIMPI_DECLARE(int, Isendrecv_c,
                (const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Isendrecv_replace_c,
                (void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                 int sendtag, int source, int recvtag, MPI_Comm comm,
                 MPI_Request* request))
MINIMPI_DECLARE(int, Buffer_attach_c, (void* buffer, MPI_Count size))
MINIMPI_DECLARE(int, Buffer_detach_c, (void* buffer_addr, MPI_Count* size))
MINIMPI_DECLARE(int, Op_create_c,
                (MPI_User_function_c * user_fn, int commute, MPI_Op* op))
MINIMPI_DECLARE(int, Reduce_local_c,
                (const void* inbuf, void* inoutbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op))
MINIMPI_DECLARE(int, Status_set_elements_c,
                (MPI_Status * status, MPI_Datatype datatype, MPI_Count count))

/* MPI-4.1: buffers for buffered sends per communicator and per session
 * (a buffered send uses its communicator's, else its session's, else the
 * process's), and the status of requests without freeing them. */
MINIMPI_DECLARE(int, Comm_attach_buffer,
                (MPI_Comm comm, void* buffer, int size))
MINIMPI_DECLARE(int, Comm_attach_buffer_c,
                (MPI_Comm comm, void* buffer, MPI_Count size))
MINIMPI_DECLARE(int, Comm_detach_buffer,
                (MPI_Comm comm, void* buffer_addr, int* size))
MINIMPI_DECLARE(int, Comm_detach_buffer_c,
                (MPI_Comm comm, void* buffer_addr, MPI_Count* size))
MINIMPI_DECLARE(int, Comm_flush_buffer, (MPI_Comm comm))
MINIMPI_DECLARE(int, Comm_iflush_buffer, (MPI_Comm comm, MPI_Request* request))
MINIMPI_DECLARE(int, Session_attach_buffer,
                (MPI_Session session, void* buffer, int size))
MINIMPI_DECLARE(int, Session_attach_buffer_c,
                (MPI_Session session, void* buffer, MPI_Count size))
MINIMPI_DECLARE(int, Session_detach_buffer,
                (MPI_Session session, void* buffer_addr, int* size))
MINIMPI_DECLARE(int, Session_detach_buffer_c,
                (MPI_Session session, void* buffer_addr, MPI_Count* size))
MINIMPI_DECLARE(int, Session_flush_buffer, (MPI_Session session))
MINIMPI_DECLARE(int, Session_iflush_buffer,
                (MPI_Session session, MPI_Request* request))
MINIMPI_DECLARE(int, Request_get_status_any,
                (int count, MPI_Request array_of_requests[], int* index,
                 int* flag, MPI_Status* status))
MINIMPI_DECLARE(int, Request_get_status_all,
                (int count, MPI_Request array_of_requests[], int* flag,
                 MPI_Status array_of_statuses[]))
MINIMPI_DECLARE(int, Request_get_status_some,
                (int incount, MPI_Request array_of_requests[], int* outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]))
MINIMPI_DECLARE(int, Get_hw_resource_info, (MPI_Info * hw_info))

/* Handle conversions (MPI_Fint is int). A predefined handle converts to
 * its own ABI value; any other handle to an integer naming its slot (see
 * mpi/bindings/handle_conversion.cc). Converting back the integer of a
 * freed handle gives an invalid handle. */
MINIMPI_DECLARE(MPI_Fint, Comm_c2f, (MPI_Comm comm))
MINIMPI_DECLARE(MPI_Comm, Comm_f2c, (MPI_Fint comm))
MINIMPI_DECLARE(MPI_Fint, Type_c2f, (MPI_Datatype datatype))
MINIMPI_DECLARE(MPI_Datatype, Type_f2c, (MPI_Fint datatype))
MINIMPI_DECLARE(MPI_Fint, Group_c2f, (MPI_Group group))
MINIMPI_DECLARE(MPI_Group, Group_f2c, (MPI_Fint group))
MINIMPI_DECLARE(MPI_Fint, Request_c2f, (MPI_Request request))
MINIMPI_DECLARE(MPI_Request, Request_f2c, (MPI_Fint request))
MINIMPI_DECLARE(MPI_Fint, Op_c2f, (MPI_Op op))
MINIMPI_DECLARE(MPI_Op, Op_f2c, (MPI_Fint op))
MINIMPI_DECLARE(MPI_Fint, Info_c2f, (MPI_Info info))
MINIMPI_DECLARE(MPI_Info, Info_f2c, (MPI_Fint info))
MINIMPI_DECLARE(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler))
MINIMPI_DECLARE(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler))
MINIMPI_DECLARE(MPI_Fint, Message_c2f, (MPI_Message message))
MINIMPI_DECLARE(MPI_Message, Message_f2c, (MPI_Fint message))
MINIMPI_DECLARE(MPI_Fint, Win_c2f, (MPI_Win win))
MINIMPI_DECLARE(MPI_Win, Win_f2c, (MPI_Fint win))
MINIMPI_DECLARE(MPI_Fint, Session_c2f, (MPI_Session session))
MINIMPI_DECLARE(MPI_Session, Session_f2c, (MPI_Fint session))
MINIMPI_DECLARE(int, Status_c2f,
                (const MPI_Status* c_status, MPI_Fint* f_status))
MINIMPI_DECLARE(int, Status_f2c,
                (const MPI_Fint* f_status, MPI_Status* c_status))
/* ---- end of the compat block */

/* ---- The MPI-5 standard ABI (MPI-5.0 chapter 20): the constants, types and
 * calls a program built against the standard's mpi_abi.h may use that the
 * sections above do not declare. minimpi has no MPI-IO and no Fortran, so
 * the file constants and the Fortran queries exist for such programs to
 * compile and link: MPI_File_* calls are not provided. */
#define MPI_ABI_VERSION 1
#define MPI_ABI_SUBVERSION 0

/* File open modes (powers of two, ORed) and seek origins. */
enum {
  MPI_MODE_APPEND = 1,
  MPI_MODE_CREATE = 2,
  MPI_MODE_DELETE_ON_CLOSE = 4,
  MPI_MODE_EXCL = 8,
  MPI_MODE_RDONLY = 16,
  MPI_MODE_RDWR = 32,
  MPI_MODE_SEQUENTIAL = 64,
  MPI_MODE_UNIQUE_OPEN = 128,
  MPI_MODE_WRONLY = 256
};
enum { MPI_SEEK_SET = 401, MPI_SEEK_CUR = 402, MPI_SEEK_END = 403 };
#define MPI_DISPLACEMENT_CURRENT ((MPI_Offset)-1)

typedef void MPI_File_errhandler_function(MPI_File* file, int* error_code,
                                          ...);
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef MPI_Session_errhandler_function MPI_Session_errhandler_fn;
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype,
                                        MPI_Aint* extent, void* extra_state);
typedef int MPI_Datarep_conversion_function(void* userbuf,
                                            MPI_Datatype datatype, int count,
                                            void* filebuf, MPI_Offset position,
                                            void* extra_state);
typedef int MPI_Datarep_conversion_function_c(void* userbuf,
                                              MPI_Datatype datatype,
                                              MPI_Count count, void* filebuf,
                                              MPI_Offset position,
                                              void* extra_state);
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function*)0x0)
#define MPI_CONVERSION_FN_NULL_C ((MPI_Datarep_conversion_function_c*)0x0)

/* The ABI's version (1.0), its type sizes as an info object
 * ("mpi_aint_size", "mpi_count_size", "mpi_offset_size"), and the Fortran
 * queries: minimpi has no Fortran bindings, so MPI_Abi_get_fortran_info
 * gives MPI_INFO_NULL and the booleans are only remembered. */
MINIMPI_DECLARE(int, Abi_get_version, (int* abi_major, int* abi_minor))
MINIMPI_DECLARE(int, Abi_get_info, (MPI_Info * info))
MINIMPI_DECLARE(int, Abi_get_fortran_info, (MPI_Info * info))
MINIMPI_DECLARE(int, Abi_set_fortran_info, (MPI_Info info))
MINIMPI_DECLARE(int, Abi_get_fortran_booleans,
                (int logical_size, void* logical_true, void* logical_false,
                 int* is_set))
MINIMPI_DECLARE(int, Abi_set_fortran_booleans,
                (int logical_size, void* logical_true, void* logical_false))

/* Handles to integers and back (MPI-5.0): the same integers as c2f / f2c. */
MINIMPI_DECLARE(int, Comm_toint, (MPI_Comm comm))
MINIMPI_DECLARE(MPI_Comm, Comm_fromint, (int comm))
MINIMPI_DECLARE(int, Errhandler_toint, (MPI_Errhandler errhandler))
MINIMPI_DECLARE(MPI_Errhandler, Errhandler_fromint, (int errhandler))
MINIMPI_DECLARE(int, File_toint, (MPI_File file))
MINIMPI_DECLARE(MPI_File, File_fromint, (int file))
MINIMPI_DECLARE(int, Group_toint, (MPI_Group group))
MINIMPI_DECLARE(MPI_Group, Group_fromint, (int group))
MINIMPI_DECLARE(int, Info_toint, (MPI_Info info))
MINIMPI_DECLARE(MPI_Info, Info_fromint, (int info))
MINIMPI_DECLARE(int, Message_toint, (MPI_Message message))
MINIMPI_DECLARE(MPI_Message, Message_fromint, (int message))
MINIMPI_DECLARE(int, Op_toint, (MPI_Op op))
MINIMPI_DECLARE(MPI_Op, Op_fromint, (int op))
MINIMPI_DECLARE(int, Request_toint, (MPI_Request request))
MINIMPI_DECLARE(MPI_Request, Request_fromint, (int request))
MINIMPI_DECLARE(int, Session_toint, (MPI_Session session))
MINIMPI_DECLARE(MPI_Session, Session_fromint, (int session))
MINIMPI_DECLARE(int, Type_toint, (MPI_Datatype datatype))
MINIMPI_DECLARE(MPI_Datatype, Type_fromint, (int datatype))
MINIMPI_DECLARE(int, Win_toint, (MPI_Win win))
MINIMPI_DECLARE(MPI_Win, Win_fromint, (int win))
/* ---- end of the standard ABI block */

/* ---- The tool information interface, MPI_T (MPI-4.1 chapter 15). Types
 * and constants have the MPI-5 standard ABI's values. What minimpi exposes
 * through it (every MINIMPI_* setting as a control variable; queue lengths,
 * match attempts, partition arrivals, VCI traffic as performance variables;
 * events) is listed by minimpi_info and the README, "Looking inside". */
typedef struct MPI_T_enum_t* MPI_T_enum;
typedef struct MPI_T_cvar_handle_t* MPI_T_cvar_handle;
typedef struct MPI_T_pvar_handle_t* MPI_T_pvar_handle;
typedef struct MPI_T_pvar_session_t* MPI_T_pvar_session;
typedef struct MPI_T_event_registration_t* MPI_T_event_registration;
typedef struct MPI_T_event_instance_t* MPI_T_event_instance;

#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)1)

typedef enum MPI_T_cb_safety {
  MPI_T_CB_REQUIRE_NONE = 0x00,
  MPI_T_CB_REQUIRE_MPI_RESTRICTED = 0x03,
  MPI_T_CB_REQUIRE_THREAD_SAFE = 0x0F,
  MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE = 0x3F
} MPI_T_cb_safety;

typedef enum MPI_T_source_order {
  MPI_T_SOURCE_ORDERED = 1,
  MPI_T_SOURCE_UNORDERED = 2
} MPI_T_source_order;

enum {
  MPI_T_VERBOSITY_USER_BASIC = 0x09,
  MPI_T_VERBOSITY_USER_DETAIL = 0x0a,
  MPI_T_VERBOSITY_USER_ALL = 0x0c,
  MPI_T_VERBOSITY_TUNER_BASIC = 0x11,
  MPI_T_VERBOSITY_TUNER_DETAIL = 0x12,
  MPI_T_VERBOSITY_TUNER_ALL = 0x14,
  MPI_T_VERBOSITY_MPIDEV_BASIC = 0x21,
  MPI_T_VERBOSITY_MPIDEV_DETAIL = 0x22,
  MPI_T_VERBOSITY_MPIDEV_ALL = 0x24
};

enum {
  MPI_T_BIND_NO_OBJECT = 1,
  MPI_T_BIND_MPI_COMM = 2,
  MPI_T_BIND_MPI_DATATYPE = 3,
  MPI_T_BIND_MPI_ERRHANDLER = 4,
  MPI_T_BIND_MPI_FILE = 5,
  MPI_T_BIND_MPI_GROUP = 6,
  MPI_T_BIND_MPI_OP = 7,
  MPI_T_BIND_MPI_REQUEST = 8,
  MPI_T_BIND_MPI_WIN = 9,
  MPI_T_BIND_MPI_MESSAGE = 10,
  MPI_T_BIND_MPI_INFO = 11,
  MPI_T_BIND_MPI_SESSION = 12
};

enum {
  MPI_T_SCOPE_CONSTANT = 1,
  MPI_T_SCOPE_READONLY = 2,
  MPI_T_SCOPE_LOCAL = 3,
  MPI_T_SCOPE_GROUP = 4,
  MPI_T_SCOPE_GROUP_EQ = 5,
  MPI_T_SCOPE_ALL = 6,
  MPI_T_SCOPE_ALL_EQ = 7
};

enum {
  MPI_T_PVAR_CLASS_STATE = 1,
  MPI_T_PVAR_CLASS_LEVEL = 2,
  MPI_T_PVAR_CLASS_SIZE = 3,
  MPI_T_PVAR_CLASS_PERCENTAGE = 4,
  MPI_T_PVAR_CLASS_HIGHWATERMARK = 5,
  MPI_T_PVAR_CLASS_LOWWATERMARK = 6,
  MPI_T_PVAR_CLASS_COUNTER = 7,
  MPI_T_PVAR_CLASS_AGGREGATE = 8,
  MPI_T_PVAR_CLASS_TIMER = 9,
  MPI_T_PVAR_CLASS_GENERIC = 10
};

typedef void(MPI_T_event_cb_function)(
    MPI_T_event_instance event_instance,
    MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
    void* user_data);
typedef void(MPI_T_event_free_cb_function)(
    MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
    void* user_data);
typedef void(MPI_T_event_dropped_cb_function)(
    MPI_Count count, MPI_T_event_registration event_registration,
    int source_index, MPI_T_cb_safety cb_safety, void* user_data);

MINIMPI_DECLARE(int, T_init_thread, (int required, int* provided))
MINIMPI_DECLARE(int, T_finalize, (void))
MINIMPI_DECLARE(int, T_enum_get_info,
                (MPI_T_enum enumtype, int* num, char* name, int* name_len))
MINIMPI_DECLARE(int, T_enum_get_item,
                (MPI_T_enum enumtype, int index, int* value, char* name,
                 int* name_len))
MINIMPI_DECLARE(int, T_cvar_get_num, (int* num_cvar))
MINIMPI_DECLARE(int, T_cvar_get_info,
                (int cvar_index, char* name, int* name_len, int* verbosity,
                 MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc,
                 int* desc_len, int* bind, int* scope))
MINIMPI_DECLARE(int, T_cvar_get_index, (const char* name, int* cvar_index))
MINIMPI_DECLARE(int, T_cvar_handle_alloc,
                (int cvar_index, void* obj_handle, MPI_T_cvar_handle* handle,
                 int* count))
MINIMPI_DECLARE(int, T_cvar_handle_free, (MPI_T_cvar_handle * handle))
MINIMPI_DECLARE(int, T_cvar_read, (MPI_T_cvar_handle handle, void* buf))
MINIMPI_DECLARE(int, T_cvar_write,
                (MPI_T_cvar_handle handle, const void* buf))
MINIMPI_DECLARE(int, T_pvar_get_num, (int* num_pvar))
MINIMPI_DECLARE(int, T_pvar_get_info,
                (int pvar_index, char* name, int* name_len, int* verbosity,
                 int* var_class, MPI_Datatype* datatype, MPI_T_enum* enumtype,
                 char* desc, int* desc_len, int* bind, int* readonly,
                 int* continuous, int* atomic))
MINIMPI_DECLARE(int, T_pvar_get_index,
                (const char* name, int var_class, int* pvar_index))
MINIMPI_DECLARE(int, T_pvar_session_create, (MPI_T_pvar_session * session))
MINIMPI_DECLARE(int, T_pvar_session_free, (MPI_T_pvar_session * session))
MINIMPI_DECLARE(int, T_pvar_handle_alloc,
                (MPI_T_pvar_session session, int pvar_index, void* obj_handle,
                 MPI_T_pvar_handle* handle, int* count))
MINIMPI_DECLARE(int, T_pvar_handle_free,
                (MPI_T_pvar_session session, MPI_T_pvar_handle* handle))
MINIMPI_DECLARE(int, T_pvar_start,
                (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
MINIMPI_DECLARE(int, T_pvar_stop,
                (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
MINIMPI_DECLARE(int, T_pvar_read,
                (MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                 void* buf))
MINIMPI_DECLARE(int, T_pvar_write,
                (MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                 const void* buf))
MINIMPI_DECLARE(int, T_pvar_reset,
                (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
MINIMPI_DECLARE(int, T_pvar_readreset,
                (MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                 void* buf))
MINIMPI_DECLARE(int, T_category_get_num, (int* num_cat))
MINIMPI_DECLARE(int, T_category_get_info,
                (int cat_index, char* name, int* name_len, char* desc,
                 int* desc_len, int* num_cvars, int* num_pvars,
                 int* num_categories))
MINIMPI_DECLARE(int, T_category_get_num_events,
                (int cat_index, int* num_events))
MINIMPI_DECLARE(int, T_category_get_index, (const char* name, int* cat_index))
MINIMPI_DECLARE(int, T_category_get_cvars,
                (int cat_index, int len, int indices[]))
MINIMPI_DECLARE(int, T_category_get_pvars,
                (int cat_index, int len, int indices[]))
MINIMPI_DECLARE(int, T_category_get_events,
                (int cat_index, int len, int indices[]))
MINIMPI_DECLARE(int, T_category_get_categories,
                (int cat_index, int len, int indices[]))
MINIMPI_DECLARE(int, T_category_changed, (int* update_number))
MINIMPI_DECLARE(int, T_source_get_num, (int* num_sources))
MINIMPI_DECLARE(int, T_source_get_info,
                (int source_index, char* name, int* name_len, char* desc,
                 int* desc_len, MPI_T_source_order* ordering,
                 MPI_Count* ticks_per_second, MPI_Count* max_ticks,
                 MPI_Info* info))
MINIMPI_DECLARE(int, T_source_get_timestamp,
                (int source_index, MPI_Count* timestamp))
MINIMPI_DECLARE(int, T_event_get_num, (int* num_events))
MINIMPI_DECLARE(int, T_event_get_info,
                (int event_index, char* name, int* name_len, int* verbosity,
                 MPI_Datatype array_of_datatypes[],
                 MPI_Aint array_of_displacements[], int* num_elements,
                 MPI_T_enum* enumtype, MPI_Info* info, char* desc,
                 int* desc_len, int* bind))
MINIMPI_DECLARE(int, T_event_get_index, (const char* name, int* event_index))
MINIMPI_DECLARE(int, T_event_handle_alloc,
                (int event_index, void* obj_handle, MPI_Info info,
                 MPI_T_event_registration* event_registration))
MINIMPI_DECLARE(int, T_event_handle_set_info,
                (MPI_T_event_registration event_registration, MPI_Info info))
MINIMPI_DECLARE(int, T_event_handle_get_info,
                (MPI_T_event_registration event_registration,
                 MPI_Info* info_used))
MINIMPI_DECLARE(int, T_event_register_callback,
                (MPI_T_event_registration event_registration,
                 MPI_T_cb_safety cb_safety, MPI_Info info, void* user_data,
                 MPI_T_event_cb_function* event_cb_function))
MINIMPI_DECLARE(int, T_event_callback_set_info,
                (MPI_T_event_registration event_registration,
                 MPI_T_cb_safety cb_safety, MPI_Info info))
MINIMPI_DECLARE(int, T_event_callback_get_info,
                (MPI_T_event_registration event_registration,
                 MPI_T_cb_safety cb_safety, MPI_Info* info_used))
MINIMPI_DECLARE(int, T_event_handle_free,
                (MPI_T_event_registration event_registration, void* user_data,
                 MPI_T_event_free_cb_function* free_cb_function))
MINIMPI_DECLARE(int, T_event_set_dropped_handler,
                (MPI_T_event_registration event_registration,
                 MPI_T_event_dropped_cb_function* dropped_cb_function))
MINIMPI_DECLARE(int, T_event_read,
                (MPI_T_event_instance event_instance, int element_index,
                 void* buffer))
MINIMPI_DECLARE(int, T_event_copy,
                (MPI_T_event_instance event_instance, void* buffer))
MINIMPI_DECLARE(int, T_event_get_timestamp,
                (MPI_T_event_instance event_instance,
                 MPI_Count* event_timestamp))
MINIMPI_DECLARE(int, T_event_get_source,
                (MPI_T_event_instance event_instance, int* source_index))
/* ---- end of MPI_T */

#undef MINIMPI_DECLARE
#undef MINIMPIX_DECLARE

#ifdef __cplusplus
}
#endif

#endif /* MINIMPI_MPI_H_ */
