// JSON lines for the small records of the audit area, written by hand so
// that 64-bit numbers stay JSON numbers (protobuf's printer writes them as
// strings, which the strict reader in lib/base refuses) and keys keep the
// order of the .proto.
#ifndef GARUDA_LIB_AUDIT_JSON_RECORDS_H_
#define GARUDA_LIB_AUDIT_JSON_RECORDS_H_

#include <string>

#include "proto/audit_log.pb.h"
#include "proto/audit_witness.pb.h"

namespace garuda {

// {"log":"...","seq":5,"hash":"..."} (no newline)
std::string CheckpointJson(const audit::AuditCheckpoint& checkpoint);
// {"dir":..,"log":..,"seq":..,"hash":..,"prevSeq":..,"prevHash":..}
std::string WitnessHeadJson(const audit::WitnessHead& head);
// Every field of the report, zero values included.
std::string LogReportJson(const audit::LogReport& report);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_JSON_RECORDS_H_
