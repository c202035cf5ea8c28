"""C++ code from .proto files with the system protoc (Debian's protobuf-compiler).

garuda_proto(name = "auditor_service", deps = ["audit_log", "common"])
compiles <package>/auditor_service.proto into a cc_library named
auditor_service_cc_proto. A dep is a proto of the same Bazel package
("common") or of another one ("//proto:common"); list every proto the file
imports, also through its imports (protoc reads them all).
"""

def _dep(dep):
    """(the .proto file's label, its cc_library's label) for a dep."""
    if dep.startswith("//"):
        pkg, name = dep.split(":")
        return (pkg + ":" + name + ".proto", pkg + ":" + name + "_cc_proto")
    return (dep + ".proto", dep + "_cc_proto")

def garuda_proto(name, deps = [], visibility = ["//visibility:public"], testonly = False):
    src = name + ".proto"
    pkg = native.package_name()
    native.genrule(
        name = name + "_genproto",
        srcs = [src] + [_dep(d)[0] for d in deps],
        outs = [name + ".pb.h", name + ".pb.cc"],
        cmd = "protoc --proto_path=. --proto_path=/usr/include --cpp_out=$(GENDIR) %s/%s" % (pkg, src),
        testonly = testonly,
        visibility = ["//visibility:private"],
    )
    native.cc_library(
        name = name + "_cc_proto",
        srcs = [name + ".pb.cc"],
        hdrs = [name + ".pb.h"],
        deps = [_dep(d)[1] for d in deps] + ["//third_party/system:protobuf"],
        copts = ["-Wno-unused-parameter"],
        testonly = testonly,
        visibility = visibility,
    )
