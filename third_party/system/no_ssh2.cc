// Stubs for the libssh2 functions that libgit2's static archive refers to,
// for programs that link libgit2 statically (static_link.bzl) and never talk
// to a git remote. libgit2 uses libssh2 only for ssh:// remotes; linking the
// real libssh2 brings most of OpenSSL's libcrypto with it (its ciphers, key
// formats and error tables: some 340 KB of pointers that the dynamic loader
// must relocate, page by page, at every start of a PIE). libssh2_init
// succeeds (libgit2 calls it from git_libgit2_init); opening a session
// fails, so an ssh:// remote that were ever tried ends with libgit2's own
// error ("failed to initialize SSH session"); nothing past that is reached,
// and each of the rest fails too.
#include <libssh2.h>

namespace {

// LIBSSH2_ERROR_* codes are negative; this one says no method is there.
constexpr int kFail = LIBSSH2_ERROR_METHOD_NONE;
char kNoSsh[] = "SSH is not built into this program";

}  // namespace

extern "C" {

int libssh2_init(int) { return 0; }
void libssh2_exit(void) {}

LIBSSH2_SESSION* libssh2_session_init_ex(void* (*)(size_t, void**),
                                         void (*)(void*, void**),
                                         void* (*)(void*, size_t, void**),
                                         void*) {
  return nullptr;
}
void** libssh2_session_abstract(LIBSSH2_SESSION*) { return nullptr; }
int libssh2_session_handshake(LIBSSH2_SESSION*, libssh2_socket_t) {
  return kFail;
}
int libssh2_session_disconnect_ex(LIBSSH2_SESSION*, int, const char*,
                                  const char*) {
  return kFail;
}
int libssh2_session_free(LIBSSH2_SESSION*) { return 0; }
const char* libssh2_hostkey_hash(LIBSSH2_SESSION*, int) { return nullptr; }
const char* libssh2_session_hostkey(LIBSSH2_SESSION*, size_t* len, int* type) {
  if (len != nullptr) *len = 0;
  if (type != nullptr) *type = LIBSSH2_HOSTKEY_TYPE_UNKNOWN;
  return nullptr;
}
int libssh2_session_method_pref(LIBSSH2_SESSION*, int, const char*) {
  return kFail;
}
int libssh2_session_last_error(LIBSSH2_SESSION*, char** errmsg, int* errmsg_len,
                               int) {
  if (errmsg != nullptr) *errmsg = kNoSsh;
  if (errmsg_len != nullptr) *errmsg_len = sizeof kNoSsh - 1;
  return kFail;
}
void libssh2_session_set_blocking(LIBSSH2_SESSION*, int) {}

char* libssh2_userauth_list(LIBSSH2_SESSION*, const char*, unsigned int) {
  return nullptr;
}
int libssh2_userauth_authenticated(LIBSSH2_SESSION*) { return 0; }
int libssh2_userauth_password_ex(LIBSSH2_SESSION*, const char*, unsigned int,
                                 const char*, unsigned int,
                                 void (*)(LIBSSH2_SESSION*, char**, int*,
                                          void**)) {
  return kFail;
}
int libssh2_userauth_publickey_fromfile_ex(LIBSSH2_SESSION*, const char*,
                                           unsigned int, const char*,
                                           const char*, const char*) {
  return kFail;
}
int libssh2_userauth_publickey(LIBSSH2_SESSION*, const char*,
                               const unsigned char*, size_t,
                               int (*)(LIBSSH2_SESSION*, unsigned char**,
                                       size_t*, const unsigned char*, size_t,
                                       void**),
                               void**) {
  return kFail;
}
int libssh2_userauth_publickey_frommemory(LIBSSH2_SESSION*, const char*, size_t,
                                          const char*, size_t, const char*,
                                          size_t, const char*) {
  return kFail;
}
int libssh2_userauth_keyboard_interactive_ex(
    LIBSSH2_SESSION*, const char*, unsigned int,
    void (*)(const char*, int, const char*, int, int,
             const LIBSSH2_USERAUTH_KBDINT_PROMPT*,
             LIBSSH2_USERAUTH_KBDINT_RESPONSE*, void**)) {
  return kFail;
}

LIBSSH2_CHANNEL* libssh2_channel_open_ex(LIBSSH2_SESSION*, const char*,
                                         unsigned int, unsigned int,
                                         unsigned int, const char*,
                                         unsigned int) {
  return nullptr;
}
int libssh2_channel_process_startup(LIBSSH2_CHANNEL*, const char*, unsigned int,
                                    const char*, unsigned int) {
  return kFail;
}
ssize_t libssh2_channel_read_ex(LIBSSH2_CHANNEL*, int, char*, size_t) {
  return kFail;
}
ssize_t libssh2_channel_write_ex(LIBSSH2_CHANNEL*, int, const char*, size_t) {
  return kFail;
}
void libssh2_channel_set_blocking(LIBSSH2_CHANNEL*, int) {}
int libssh2_channel_close(LIBSSH2_CHANNEL*) { return kFail; }
int libssh2_channel_free(LIBSSH2_CHANNEL*) { return 0; }

LIBSSH2_KNOWNHOSTS* libssh2_knownhost_init(LIBSSH2_SESSION*) { return nullptr; }
int libssh2_knownhost_checkp(LIBSSH2_KNOWNHOSTS*, const char*, int, const char*,
                             size_t, int,
                             struct libssh2_knownhost** knownhost) {
  if (knownhost != nullptr) *knownhost = nullptr;
  return LIBSSH2_KNOWNHOST_CHECK_FAILURE;
}
void libssh2_knownhost_free(LIBSSH2_KNOWNHOSTS*) {}
int libssh2_knownhost_readfile(LIBSSH2_KNOWNHOSTS*, const char*, int) {
  return kFail;
}

LIBSSH2_AGENT* libssh2_agent_init(LIBSSH2_SESSION*) { return nullptr; }
int libssh2_agent_connect(LIBSSH2_AGENT*) { return kFail; }
int libssh2_agent_list_identities(LIBSSH2_AGENT*) { return kFail; }
int libssh2_agent_get_identity(LIBSSH2_AGENT*,
                               struct libssh2_agent_publickey** store,
                               struct libssh2_agent_publickey*) {
  if (store != nullptr) *store = nullptr;
  return kFail;
}
int libssh2_agent_userauth(LIBSSH2_AGENT*, const char*,
                           struct libssh2_agent_publickey*) {
  return kFail;
}
int libssh2_agent_disconnect(LIBSSH2_AGENT*) { return kFail; }
void libssh2_agent_free(LIBSSH2_AGENT*) {}

}  // extern "C"
