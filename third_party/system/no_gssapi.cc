// Stubs for the eight GSSAPI (RFC 2744) entry points that libgit2's static
// archive refers to, for programs that link libgit2 statically and never
// talk to a git remote. libgit2 uses GSSAPI only for the Negotiate
// (Kerberos) authentication of HTTP remotes; Debian ships GSSAPI only as
// shared libraries, and loading them (libgssapi_krb5 and six more) would
// cost every start of the program. Each stub fails, so a Negotiate
// authentication that were ever tried ends with libgit2's own error
// ("could not query mechanisms"); the release functions have nothing to
// release. Declared by hand: Debian's gssapi headers come with libkrb5-dev.
#include <cstddef>
#include <cstdint>

namespace {

using OmUint32 = uint32_t;
constexpr OmUint32 kGssFailure = 13u << 16;  // GSS_S_FAILURE
constexpr OmUint32 kGssComplete = 0;         // GSS_S_COMPLETE

struct GssBuffer {  // gss_buffer_desc
  size_t length;
  void* value;
};

OmUint32 Fail(OmUint32* minor_status) {
  if (minor_status != nullptr) *minor_status = 0;
  return kGssFailure;
}

}  // namespace

extern "C" {

// gss_OID GSS_C_NT_HOSTBASED_SERVICE: no name type without GSSAPI.
void* GSS_C_NT_HOSTBASED_SERVICE = nullptr;

OmUint32 gss_indicate_mechs(OmUint32* minor_status, void** mech_set) {
  if (mech_set != nullptr) *mech_set = nullptr;
  return Fail(minor_status);
}

OmUint32 gss_import_name(OmUint32* minor_status, const void* /*name*/,
                         const void* /*name_type*/, void** output_name) {
  if (output_name != nullptr) *output_name = nullptr;
  return Fail(minor_status);
}

OmUint32 gss_init_sec_context(OmUint32* minor_status, const void*, void**,
                              const void*, const void*, OmUint32, OmUint32,
                              const void*, const void*, void** actual_mech,
                              GssBuffer* output_token, OmUint32* ret_flags,
                              OmUint32* time_rec) {
  if (actual_mech != nullptr) *actual_mech = nullptr;
  if (output_token != nullptr) *output_token = {0, nullptr};
  if (ret_flags != nullptr) *ret_flags = 0;
  if (time_rec != nullptr) *time_rec = 0;
  return Fail(minor_status);
}

OmUint32 gss_display_status(OmUint32* minor_status, OmUint32, int, const void*,
                            OmUint32* message_context,
                            GssBuffer* status_string) {
  if (message_context != nullptr) *message_context = 0;
  if (status_string != nullptr) *status_string = {0, nullptr};
  return Fail(minor_status);
}

OmUint32 gss_delete_sec_context(OmUint32* minor_status, void** context,
                                GssBuffer* output_token) {
  if (minor_status != nullptr) *minor_status = 0;
  if (context != nullptr) *context = nullptr;
  if (output_token != nullptr) *output_token = {0, nullptr};
  return kGssComplete;
}

OmUint32 gss_release_buffer(OmUint32* minor_status, GssBuffer* buffer) {
  if (minor_status != nullptr) *minor_status = 0;
  if (buffer != nullptr) *buffer = {0, nullptr};
  return kGssComplete;
}

OmUint32 gss_release_name(OmUint32* minor_status, void** name) {
  if (minor_status != nullptr) *minor_status = 0;
  if (name != nullptr) *name = nullptr;
  return kGssComplete;
}

OmUint32 gss_release_oid_set(OmUint32* minor_status, void** set) {
  if (minor_status != nullptr) *minor_status = 0;
  if (set != nullptr) *set = nullptr;
  return kGssComplete;
}

}  // extern "C"
