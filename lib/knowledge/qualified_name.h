// The dotted name queries report for a symbol: its owning classes and,
// for a top-level declaration, its file ("shop/cart.py:Cart.add").
#ifndef GARUDA_LIB_KNOWLEDGE_QUALIFIED_NAME_H_
#define GARUDA_LIB_KNOWLEDGE_QUALIFIED_NAME_H_

#include <string>

#include "lib/knowledge/index.h"

namespace garuda::knowledge {

std::string QualifiedName(const Index& index, int symbol);

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_QUALIFIED_NAME_H_
