/* SPDX-License-Identifier: MIT
 *
 * The part of libmicrohttpd's ABI the /metrics endpoint uses (src/sinks/http.c), declared here so that
 * jobscope builds without libmicrohttpd-dev and loads libmicrohttpd.so.12 with dlopen (src/sys/dlib.h) only
 * when an endpoint is started: the CLI's other commands (a `jobscope mark` in a job script above all) do not
 * pay for mapping it. Transcribed from /usr/include/microhttpd.h of libmicrohttpd 0.9.75 (MHD_VERSION
 * 0x00097500, Debian libmicrohttpd-dev 0.9.75-6); the soname has been .so.12 since 0.9.x and the values below
 * are part of that stable ABI (enum values are never renumbered; new ones are appended). The newest entry
 * point used, MHD_create_response_from_buffer_with_free_callback_cls, is available since 0.9.73.
 *
 * http.c keeps libmicrohttpd's names at its call sites: each MHD_ function below is a macro for the pointer
 * bound at load time (mhd_api.NAME), so the file reads as ordinary libmicrohttpd code. A new MHD_ call there
 * needs its entry here (the build fails until it has one, as it would without the real header).
 */
#ifndef JOBSCOPE_MHD_ABI_H
#define JOBSCOPE_MHD_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct MHD_Daemon;     /* opaque */
struct MHD_Connection; /* opaque */
struct MHD_Response;   /* opaque */

/* enum MHD_Result */
enum MHD_Result { MHD_NO = 0, MHD_YES = 1 };

/* enum MHD_ValueKind (the one used) */
#define MHD_HEADER_KIND 1
/* enum MHD_ResponseMemoryMode (the one used) */
#define MHD_RESPMEM_PERSISTENT 0
/* enum MHD_FEATURE (those used) */
#define MHD_FEATURE_TLS 2
#define MHD_FEATURE_EPOLL 7

/* enum MHD_FLAG (those used) */
#define MHD_USE_TLS 2u
#define MHD_USE_INTERNAL_POLLING_THREAD 8u
#define MHD_USE_IPv6 16u
#define MHD_USE_POLL 64u
#define MHD_USE_EPOLL 512u

/* enum MHD_OPTION (those used), passed through MHD_start_daemon's varargs as int, each followed by its value
 * of the type noted */
#define MHD_OPTION_END 0
#define MHD_OPTION_CONNECTION_MEMORY_LIMIT 1 /* size_t */
#define MHD_OPTION_CONNECTION_LIMIT 2        /* unsigned int */
#define MHD_OPTION_CONNECTION_TIMEOUT 3      /* unsigned int */
#define MHD_OPTION_NOTIFY_COMPLETED 4        /* MHD_RequestCompletedCallback, void * */
#define MHD_OPTION_PER_IP_CONNECTION_LIMIT 5 /* unsigned int */
#define MHD_OPTION_HTTPS_MEM_KEY 8           /* const char * */
#define MHD_OPTION_HTTPS_MEM_CERT 9          /* const char * */
#define MHD_OPTION_LISTEN_SOCKET 12          /* MHD_socket (int on POSIX) */
#define MHD_OPTION_NOTIFY_CONNECTION 27      /* MHD_NotifyConnectionCallback, void * */
#define MHD_OPTION_STRICT_FOR_CLIENT 29      /* int */

/* enum MHD_ConnectionNotificationCode */
#define MHD_CONNECTION_NOTIFY_STARTED 0
#define MHD_CONNECTION_NOTIFY_CLOSED 1

/* enum MHD_ConnectionInfoType (those used), and the members of union MHD_ConnectionInfo they return: the
 * union's size does not matter, a pointer to it is returned and one member read */
#define MHD_CONNECTION_INFO_CLIENT_ADDRESS 2 /* client_addr */
#define MHD_CONNECTION_INFO_CONNECTION_FD 6  /* connect_fd */
#define MHD_CONNECTION_INFO_SOCKET_CONTEXT 7 /* socket_context */
union MHD_ConnectionInfo {
    int cipher_algorithm;
    int protocol;
    int suspended;
    unsigned int connection_timeout;
    unsigned int http_status;
    int connect_fd; /* MHD_socket */
    size_t header_size;
    void *tls_session;
    void *client_cert;
    struct sockaddr *client_addr;
    struct MHD_Daemon *daemon;
    void *socket_context;
};

/* status codes, header names and methods (plain values in microhttpd.h) */
#define MHD_HTTP_OK 200
#define MHD_HTTP_BAD_REQUEST 400
#define MHD_HTTP_UNAUTHORIZED 401
#define MHD_HTTP_NOT_FOUND 404
#define MHD_HTTP_METHOD_NOT_ALLOWED 405
#define MHD_HTTP_SERVICE_UNAVAILABLE 503
#define MHD_HTTP_HEADER_ACCEPT "Accept"
#define MHD_HTTP_HEADER_ALLOW "Allow"
#define MHD_HTTP_HEADER_AUTHORIZATION "Authorization"
#define MHD_HTTP_HEADER_CACHE_CONTROL "Cache-Control"
#define MHD_HTTP_HEADER_CONTENT_TYPE "Content-Type"
#define MHD_HTTP_HEADER_RETRY_AFTER "Retry-After"
#define MHD_HTTP_HEADER_WWW_AUTHENTICATE "WWW-Authenticate"
#define MHD_HTTP_METHOD_GET "GET"
#define MHD_HTTP_METHOD_HEAD "HEAD"

typedef enum MHD_Result (*MHD_AcceptPolicyCallback)(void *cls, const struct sockaddr *addr,
                                                    socklen_t addrlen);
typedef enum MHD_Result (*MHD_AccessHandlerCallback)(void *cls, struct MHD_Connection *connection,
                                                     const char *url, const char *method, const char *version,
                                                     const char *upload_data, size_t *upload_data_size,
                                                     void **con_cls);
typedef void (*MHD_ContentReaderFreeCallback)(void *cls);
typedef void (*MHD_RequestCompletedCallback)(void *cls, struct MHD_Connection *connection, void **con_cls,
                                             int toe);
typedef void (*MHD_NotifyConnectionCallback)(void *cls, struct MHD_Connection *connection,
                                             void **socket_context, int toe);

/* The entry points (all required), bound by dlib_resolve into one struct. enum parameters are int-sized. */
typedef struct {
    struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                       void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...);
    void (*stop_daemon)(struct MHD_Daemon *daemon);
    enum MHD_Result (*is_feature_supported)(int feature);
    const char *(*lookup_connection_value)(struct MHD_Connection *connection, int kind, const char *key);
    char *(*basic_auth_get_username_password)(struct MHD_Connection *connection, char **password);
    void (*free_mem)(void *ptr);
    struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer, int mode);
    struct MHD_Response *(*create_response_from_buffer_with_free_callback_cls)(
        size_t size, void *buffer, MHD_ContentReaderFreeCallback crfc, void *crfc_cls);
    enum MHD_Result (*add_response_header)(struct MHD_Response *response, const char *header,
                                           const char *content);
    enum MHD_Result (*queue_response)(struct MHD_Connection *connection, unsigned int status_code,
                                      struct MHD_Response *response);
    enum MHD_Result (*queue_basic_auth_fail_response)(struct MHD_Connection *connection, const char *realm,
                                                      struct MHD_Response *response);
    void (*destroy_response)(struct MHD_Response *response);
    const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *connection, int info_type,
                                                           ...);
} js_mhd_api_t;

/* The bound entry points (http.c); valid once http_start has loaded the library. */
extern js_mhd_api_t mhd_api;

#define MHD_start_daemon (mhd_api.start_daemon)
#define MHD_stop_daemon (mhd_api.stop_daemon)
#define MHD_is_feature_supported (mhd_api.is_feature_supported)
#define MHD_lookup_connection_value (mhd_api.lookup_connection_value)
#define MHD_basic_auth_get_username_password (mhd_api.basic_auth_get_username_password)
#define MHD_free (mhd_api.free_mem)
#define MHD_create_response_from_buffer (mhd_api.create_response_from_buffer)
#define MHD_create_response_from_buffer_with_free_callback_cls                                               \
    (mhd_api.create_response_from_buffer_with_free_callback_cls)
#define MHD_add_response_header (mhd_api.add_response_header)
#define MHD_queue_response (mhd_api.queue_response)
#define MHD_queue_basic_auth_fail_response (mhd_api.queue_basic_auth_fail_response)
#define MHD_destroy_response (mhd_api.destroy_response)
#define MHD_get_connection_info (mhd_api.get_connection_info)

#endif
