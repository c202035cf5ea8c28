// The version of every Garuda program: one number, kept here only.
#ifndef GARUDA_LIB_BASE_VERSION_H_
#define GARUDA_LIB_BASE_VERSION_H_

namespace garuda {

inline constexpr char kGarudaVersion[] = "0.3.0";

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_VERSION_H_
