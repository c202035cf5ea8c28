"""C++ code from .proto files with the system protoc (Debian's protobuf-compiler).

garuda_proto(name = "audit", deps = ["policy"]) compiles proto/audit.proto,
which may import the listed protos of the same package, into a cc_library
named audit_cc_proto.
"""

def garuda_proto(name, deps = [], visibility = ["//visibility:public"]):
    src = name + ".proto"
    pkg = native.package_name()
    dep_srcs = [d + ".proto" for d in deps]
    native.genrule(
        name = name + "_genproto",
        srcs = [src] + dep_srcs,
        outs = [name + ".pb.h", name + ".pb.cc"],
        cmd = "protoc --proto_path=. --proto_path=/usr/include --cpp_out=$(GENDIR) %s/%s" % (pkg, src),
        visibility = ["//visibility:private"],
    )
    native.cc_library(
        name = name + "_cc_proto",
        srcs = [name + ".pb.cc"],
        hdrs = [name + ".pb.h"],
        deps = [d + "_cc_proto" for d in deps] + ["//third_party/system:protobuf"],
        copts = ["-Wno-unused-parameter"],
        visibility = visibility,
    )
