"""Linking a program with the static archives of the system libraries.

Debian's shared Abseil alone is some sixty libraries; loading and relocating
them (and protobuf, libgit2 and libgit2's own dependencies) is most of the
start-up time of a small program. A program that starts once per command
(garuda-stager) links their static archives instead, in one group, and keeps
only the C library shared. The dynamic -l flags that its dependencies carry
still follow on the link line; --as-needed drops them, as nothing is left
for them to resolve.

libgit2's static archive refers to GSSAPI, which Debian ships only as shared
libraries: a program that never talks to a git remote adds
//third_party/system:no_gssapi (stubs that fail) to its deps, and
//third_party/system:no_ssh2 instead of libssh2 (which would bring most of
OpenSSL's libcrypto along).

STARTUP_FEATURES and STARTUP_LINKOPTS make the start of such a PIE cheaper
(docs/sandbox.md, "Start-up of garuda-stager"): GNU ld instead of gold, for
DT_RELR (-z pack-relative-relocs: the relative relocations as a bitmap,
which glibc 2.36 applies; gold cannot write them, and Bazel gives gold
--start-lib, which GNU ld does not know, hence the feature turned off), and
no dynamic symbol table for the static archives' symbols (--exclude-libs:
gold exported some 16 000 of them because the shared libraries named later
on the link line refer to them).
"""

# cc_binary(features = STARTUP_FEATURES): no --start-lib, so GNU ld can link.
STARTUP_FEATURES = ["-supports_start_end_lib"]

STARTUP_LINKOPTS = [
    "-fuse-ld=bfd",
    "-Wl,-z,pack-relative-relocs",
    "-Wl,--exclude-libs,ALL",
    "-Wl,-O1",
]

# The libraries of //third_party/system:absl, in the same (link) order.
ABSL_LIBRARIES = [
    "absl_flags_parse",
    "absl_flags_usage",
    "absl_flags_usage_internal",
    "absl_flags_internal",
    "absl_flags_marshalling",
    "absl_flags_reflection",
    "absl_flags_private_handle_accessor",
    "absl_flags_commandlineflag",
    "absl_flags_commandlineflag_internal",
    "absl_flags_config",
    "absl_flags_program_name",
    "absl_random_distributions",
    "absl_random_seed_sequences",
    "absl_random_internal_pool_urbg",
    "absl_random_internal_randen",
    "absl_random_internal_randen_hwaes",
    "absl_random_internal_randen_hwaes_impl",
    "absl_random_internal_randen_slow",
    "absl_random_internal_platform",
    "absl_random_internal_seed_material",
    "absl_random_seed_gen_exception",
    "absl_hash",
    "absl_city",
    "absl_low_level_hash",
    "absl_raw_hash_set",
    "absl_hashtablez_sampler",
    "absl_statusor",
    "absl_status",
    "absl_cord",
    "absl_cordz_info",
    "absl_cord_internal",
    "absl_cordz_functions",
    "absl_exponential_biased",
    "absl_cordz_handle",
    "absl_bad_optional_access",
    "absl_strerror",
    "absl_bad_variant_access",
    "absl_str_format_internal",
    "absl_synchronization",
    "absl_graphcycles_internal",
    "absl_stacktrace",
    "absl_symbolize",
    "absl_debugging_internal",
    "absl_demangle_internal",
    "absl_malloc_internal",
    "absl_time",
    "absl_civil_time",
    "absl_strings",
    "absl_strings_internal",
    "atomic",
    "rt",
    "absl_base",
    "absl_spinlock_wait",
    "absl_int128",
    "absl_throw_delegate",
    "absl_raw_logging_internal",
    "absl_time_zone",
    "absl_log_severity",
    "pthread",
]

# libgit2 and what its static archive needs (pkg-config's Libs.private),
# GSSAPI and libssh2 aside (no_gssapi, no_ssh2).
GIT2_LIBRARIES = [
    "git2",
    "mbedtls",
    "mbedx509",
    "mbedcrypto",
    "http_parser",
    "pcre2-8",
    "z",
]

def static_system_linkopts(libraries):
    """Link flags taking `libraries` (names for -l) from their .a files.

    Put them in a cc_binary's linkopts: those come before the linkopts of
    its dependencies on the link line, so the static archives resolve the
    symbols first.
    """
    return [
        "-static-libstdc++",
        "-static-libgcc",
        "-Wl,--as-needed",
        "-Wl,-Bstatic",
        "-Wl,--start-group",
    ] + ["-l" + name for name in libraries] + [
        # Bazel's toolchain names -lstdc++ itself (so -static-libstdc++ alone
        # does nothing): its archive joins the group.
        "-lstdc++",
        "-Wl,--end-group",
        "-Wl,-Bdynamic",
    ]

def static_pie_linkopts(libraries):
    """Link flags for a static PIE: `libraries` and the C library from .a files.

    A static PIE has no dynamic loader: the program relocates itself (the
    same DT_RELR bitmap) and loads no shared object, so the loader's work
    (mapping libc and libm, looking up their symbols, the page faults on
    their data) is gone from every start; it stays position independent,
    loaded at a random address like any PIE. Use with STARTUP_LINKOPTS and
    STARTUP_FEATURES. The trailing -Bstatic makes the -l flags that follow
    (those of the dependencies, then -lm and -lc from the compiler driver)
    resolve to archives too. glibc warns that getpwuid_r (HomeDirectory,
    when $HOME is unset) and getaddrinfo (libgit2's, never called by the
    stager) load the NSS modules of the installed glibc at run time, as a
    dynamic program does.
    """
    return ["-static-pie"] + static_system_linkopts(libraries) + [
        "-Wl,-Bstatic",
    ]

