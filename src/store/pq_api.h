#ifndef ACCORD_STORE_PQ_API_H
#define ACCORD_STORE_PQ_API_H

#include <libpq-fe.h>

#include "base/dlib.h"
#include "base/err.h"

/* libpq, loaded on demand.  Only a store opened on a PostgreSQL URL speaks to it (pg.c,
 * and the inventory executor on that store's connections), but Debian's libpq brings
 * Kerberos, LDAP, SASL, GnuTLS, p11-kit and libssl — about thirty libraries whose
 * relocations and constructors made every `accord version`, every `accord run` and every
 * process runner start several times slower.  So the binary does not link it: the first
 * PostgreSQL connection calls pq_api_load(), which opens PQ_SONAME (set by the Makefile
 * from the build's libpq) once, thread-safely, and fills `pq` with the functions Accord
 * uses; they are called as `pq.exec(...)` instead of `PQexec(...)` (the name without its
 * PQ prefix, in snake_case).  The header is included for the types only; each field has
 * the type of the prototype it stands for. */
#define PQ_API_FUNCTIONS(X)                                                                                            \
	X(backend_pid, PQbackendPID)                                                                                   \
	X(cancel, PQcancel)                                                                                            \
	X(clear, PQclear)                                                                                              \
	X(cmd_tuples, PQcmdTuples)                                                                                     \
	X(connectdb_params, PQconnectdbParams)                                                                         \
	X(consume_input, PQconsumeInput)                                                                               \
	X(db, PQdb)                                                                                                    \
	X(enter_pipeline_mode, PQenterPipelineMode)                                                                    \
	X(error_message, PQerrorMessage)                                                                               \
	X(escape_identifier, PQescapeIdentifier)                                                                       \
	X(exec, PQexec)                                                                                                \
	X(exec_prepared, PQexecPrepared)                                                                               \
	X(exit_pipeline_mode, PQexitPipelineMode)                                                                      \
	X(finish, PQfinish)                                                                                            \
	X(free_cancel, PQfreeCancel)                                                                                   \
	X(freemem, PQfreemem)                                                                                          \
	X(ftype, PQftype)                                                                                              \
	X(get_cancel, PQgetCancel)                                                                                     \
	X(get_result, PQgetResult)                                                                                     \
	X(getisnull, PQgetisnull)                                                                                      \
	X(getlength, PQgetlength)                                                                                      \
	X(getvalue, PQgetvalue)                                                                                        \
	X(host, PQhost)                                                                                                \
	X(nfields, PQnfields)                                                                                          \
	X(notifies, PQnotifies)                                                                                        \
	X(ntuples, PQntuples)                                                                                          \
	X(pass, PQpass)                                                                                                \
	X(pipeline_status, PQpipelineStatus)                                                                           \
	X(pipeline_sync, PQpipelineSync)                                                                               \
	X(port, PQport)                                                                                                \
	X(prepare, PQprepare)                                                                                          \
	X(reset, PQreset)                                                                                              \
	X(result_error_field, PQresultErrorField)                                                                      \
	X(result_error_message, PQresultErrorMessage)                                                                  \
	X(result_status, PQresultStatus)                                                                               \
	X(send_describe_prepared, PQsendDescribePrepared)                                                              \
	X(send_prepare, PQsendPrepare)                                                                                 \
	X(send_query_params, PQsendQueryParams)                                                                        \
	X(server_version, PQserverVersion)                                                                             \
	X(set_notice_processor, PQsetNoticeProcessor)                                                                  \
	X(set_single_row_mode, PQsetSingleRowMode)                                                                     \
	X(socket, PQsocket)                                                                                            \
	X(status, PQstatus)                                                                                            \
	X(transaction_status, PQtransactionStatus)                                                                     \
	X(unescape_bytea, PQunescapeBytea)                                                                             \
	X(user, PQuser)

struct pq_api {
	PQ_API_FUNCTIONS(DLIB_FIELD)
};

/* Filled by a successful pq_api_load(); all NULL before (and after a failed load). */
extern struct pq_api pq;

/* Loads the library.  Thread-safe; only the first call does the work, later calls return
 * its result.  ERR_INTERNAL "cannot load libpq.so.5 (package libpq5): <dlerror>" when
 * the library is missing, or naming the symbol when one is. */
int pq_api_load(struct err *e) WUR;

#endif
