#include "lib/crypto/merkle.h"

#include <cstring>

#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace {

// The largest power of two smaller than n (n > 1): RFC 6962's k.
uint64_t SplitPoint(uint64_t n) { return absl::bit_floor(n - 1); }

bool IsPowerOfTwo(uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

// MTH(D[start:end]) from the stored hashes. Every complete subtree the
// RFC's recursion meets is aligned (start is a multiple of its size), so it
// is one stored hash; only the right-hand remainder recurses: O(log n).
absl::StatusOr<MerkleHash> SubtreeHash(uint64_t start, uint64_t end,
                                       const StoredHashReader& read) {
  const uint64_t n = end - start;
  if (IsPowerOfTwo(n) && start % n == 0) {
    int level = absl::countr_zero(n);
    return read(level, start >> level);
  }
  const uint64_t k = SplitPoint(n);
  ASSIGN_OR_RETURN(MerkleHash left, SubtreeHash(start, start + k, read));
  ASSIGN_OR_RETURN(MerkleHash right, SubtreeHash(start + k, end, read));
  return MerkleNodeHash(left, right);
}

absl::Status AppendPath(uint64_t m, uint64_t start, uint64_t end,
                        const StoredHashReader& read,
                        std::vector<MerkleHash>* proof) {
  const uint64_t n = end - start;
  if (n == 1) return absl::OkStatus();
  const uint64_t k = SplitPoint(n);
  if (m < k) {
    RETURN_IF_ERROR(AppendPath(m, start, start + k, read, proof));
    ASSIGN_OR_RETURN(MerkleHash right, SubtreeHash(start + k, end, read));
    proof->push_back(right);
  } else {
    RETURN_IF_ERROR(AppendPath(m - k, start + k, end, read, proof));
    ASSIGN_OR_RETURN(MerkleHash left, SubtreeHash(start, start + k, read));
    proof->push_back(left);
  }
  return absl::OkStatus();
}

absl::Status AppendSubproof(uint64_t m, uint64_t start, uint64_t end,
                            bool whole, const StoredHashReader& read,
                            std::vector<MerkleHash>* proof) {
  const uint64_t n = end - start;
  if (m == n) {
    if (!whole) {
      ASSIGN_OR_RETURN(MerkleHash hash, SubtreeHash(start, end, read));
      proof->push_back(hash);
    }
    return absl::OkStatus();
  }
  const uint64_t k = SplitPoint(n);
  if (m <= k) {
    RETURN_IF_ERROR(AppendSubproof(m, start, start + k, whole, read, proof));
    ASSIGN_OR_RETURN(MerkleHash right, SubtreeHash(start + k, end, read));
    proof->push_back(right);
  } else {
    RETURN_IF_ERROR(
        AppendSubproof(m - k, start + k, end, /*whole=*/false, read, proof));
    ASSIGN_OR_RETURN(MerkleHash left, SubtreeHash(start, start + k, read));
    proof->push_back(left);
  }
  return absl::OkStatus();
}

// Shifts fn and sn right together until fn's lowest bit is set or fn is 0
// (RFC 9162's "right-shift both equally").
void ShiftWhileEven(uint64_t& fn, uint64_t& sn) {
  while (fn != 0 && (fn & 1) == 0) {
    fn >>= 1;
    sn >>= 1;
  }
}

}  // namespace

MerkleHash MerkleLeafHash(absl::string_view data) {
  Sha256 sha;
  static constexpr char kLeafPrefix[1] = {0x00};
  sha.Update(absl::string_view(kLeafPrefix, 1)).Update(data);
  return sha.Finish();
}

MerkleHash MerkleNodeHash(const MerkleHash& left, const MerkleHash& right) {
  char buffer[65];
  buffer[0] = 0x01;
  std::memcpy(buffer + 1, left.data(), 32);
  std::memcpy(buffer + 33, right.data(), 32);
  Sha256 sha;
  sha.Update(absl::string_view(buffer, sizeof(buffer)));
  return sha.Finish();
}

MerkleHash MerkleEmptyTreeHash() {
  Sha256 sha;
  return sha.Finish();
}

absl::string_view HashBytes(const MerkleHash& hash) {
  return absl::string_view(reinterpret_cast<const char*>(hash.data()),
                           hash.size());
}

absl::StatusOr<MerkleHash> HashFromBytes(absl::string_view bytes) {
  MerkleHash hash;
  if (bytes.size() != hash.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a hash is 32 bytes, not ", bytes.size()));
  }
  std::memcpy(hash.data(), bytes.data(), hash.size());
  return hash;
}

uint64_t StoredHashCount(uint64_t size) {
  // Leaf m stores its own hash and one per trailing one bit of m: in all,
  // sum over levels of size >> level, which is 2 * size - popcount(size).
  return 2 * size - static_cast<uint64_t>(absl::popcount(size));
}

uint64_t StoredHashIndex(int level, uint64_t n) {
  // The subtree is completed by its last leaf; it comes `level` places
  // after that leaf's own hash.
  const uint64_t last_leaf = ((n + 1) << level) - 1;
  return StoredHashCount(last_leaf) + static_cast<uint64_t>(level);
}

void MerkleEdge::Append(const MerkleHash& leaf_hash,
                        std::vector<MerkleHash>* stored) {
  MerkleHash hash = leaf_hash;
  if (stored != nullptr) stored->push_back(hash);
  int level = 0;
  while ((size_ >> level) & 1) {
    hash = MerkleNodeHash(edge_[level], hash);
    if (stored != nullptr) stored->push_back(hash);
    ++level;
  }
  edge_[level] = hash;
  ++size_;
}

int MerkleEdge::AppendInto(const MerkleHash& leaf_hash, uint8_t* stored) {
  MerkleHash hash = leaf_hash;
  std::memcpy(stored, hash.data(), 32);
  int level = 0;
  while ((size_ >> level) & 1) {
    hash = MerkleNodeHash(edge_[level], hash);
    ++level;
    std::memcpy(stored + 32 * level, hash.data(), 32);
  }
  edge_[level] = hash;
  ++size_;
  return level + 1;
}

MerkleHash MerkleEdge::Root() const {
  if (size_ == 0) return MerkleEmptyTreeHash();
  int level = absl::countr_zero(size_);
  MerkleHash root = edge_[level];
  for (++level; level < 64; ++level) {
    if ((size_ >> level) & 1) root = MerkleNodeHash(edge_[level], root);
  }
  return root;
}

absl::StatusOr<MerkleEdge> MerkleEdge::Load(uint64_t size,
                                            const StoredHashReader& read) {
  MerkleEdge edge;
  edge.size_ = size;
  for (int level = 0; level < 64; ++level) {
    if (((size >> level) & 1) == 0) continue;
    ASSIGN_OR_RETURN(edge.edge_[level], read(level, (size >> level) - 1));
  }
  return edge;
}

absl::StatusOr<MerkleHash> TreeRoot(uint64_t size,
                                    const StoredHashReader& read) {
  if (size == 0) return MerkleEmptyTreeHash();
  return SubtreeHash(0, size, read);
}

absl::StatusOr<std::vector<MerkleHash>> InclusionProof(
    uint64_t index, uint64_t size, const StoredHashReader& read) {
  if (index >= size) {
    return absl::InvalidArgumentError(
        absl::StrCat("leaf ", index, " is not in a tree of ", size, " leaves"));
  }
  std::vector<MerkleHash> proof;
  RETURN_IF_ERROR(AppendPath(index, 0, size, read, &proof));
  return proof;
}

absl::StatusOr<std::vector<MerkleHash>> ConsistencyProof(
    uint64_t old_size, uint64_t size, const StoredHashReader& read) {
  if (old_size > size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the old size ", old_size, " is larger than the size ", size));
  }
  std::vector<MerkleHash> proof;
  if (old_size == 0 || old_size == size) return proof;
  RETURN_IF_ERROR(
      AppendSubproof(old_size, 0, size, /*whole=*/true, read, &proof));
  return proof;
}

absl::Status VerifyInclusion(uint64_t index, uint64_t size,
                             const MerkleHash& leaf_hash,
                             const std::vector<MerkleHash>& proof,
                             const MerkleHash& root) {
  if (index >= size) {
    return absl::InvalidArgumentError(
        absl::StrCat("leaf ", index, " is not in a tree of ", size, " leaves"));
  }
  uint64_t fn = index, sn = size - 1;
  MerkleHash r = leaf_hash;
  for (const MerkleHash& p : proof) {
    if (sn == 0) {
      return absl::InvalidArgumentError(
          "the inclusion proof is longer than the tree is deep");
    }
    if ((fn & 1) || fn == sn) {
      r = MerkleNodeHash(p, r);
      if ((fn & 1) == 0) ShiftWhileEven(fn, sn);
    } else {
      r = MerkleNodeHash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) {
    return absl::InvalidArgumentError(
        "the inclusion proof is shorter than the tree is deep");
  }
  if (r != root) {
    return absl::InvalidArgumentError(
        "the inclusion proof leads to another root");
  }
  return absl::OkStatus();
}

absl::Status VerifyConsistency(uint64_t old_size, uint64_t size,
                               const std::vector<MerkleHash>& proof,
                               const MerkleHash& old_root,
                               const MerkleHash& root) {
  if (old_size > size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the old size ", old_size, " is larger than the size ", size));
  }
  if (old_size == size) {
    if (!proof.empty()) {
      return absl::InvalidArgumentError(
          "a consistency proof between equal sizes must be empty");
    }
    if (old_root != root) {
      return absl::InvalidArgumentError(
          "two different roots for the same tree size");
    }
    return absl::OkStatus();
  }
  if (old_size == 0) {
    if (!proof.empty()) {
      return absl::InvalidArgumentError(
          "a consistency proof from the empty tree must be empty");
    }
    return absl::OkStatus();
  }
  if (proof.empty()) {
    return absl::InvalidArgumentError("the consistency proof is empty");
  }
  std::vector<MerkleHash> path;
  path.reserve(proof.size() + 1);
  if (IsPowerOfTwo(old_size)) path.push_back(old_root);
  path.insert(path.end(), proof.begin(), proof.end());
  uint64_t fn = old_size - 1, sn = size - 1;
  while (fn & 1) {
    fn >>= 1;
    sn >>= 1;
  }
  MerkleHash fr = path[0], sr = path[0];
  for (size_t i = 1; i < path.size(); ++i) {
    const MerkleHash& c = path[i];
    if (sn == 0) {
      return absl::InvalidArgumentError(
          "the consistency proof is longer than the tree is deep");
    }
    if ((fn & 1) || fn == sn) {
      fr = MerkleNodeHash(c, fr);
      sr = MerkleNodeHash(c, sr);
      if ((fn & 1) == 0) ShiftWhileEven(fn, sn);
    } else {
      sr = MerkleNodeHash(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) {
    return absl::InvalidArgumentError(
        "the consistency proof is shorter than the tree is deep");
  }
  if (fr != old_root) {
    return absl::InvalidArgumentError(
        "the consistency proof does not lead to the old root");
  }
  if (sr != root) {
    return absl::InvalidArgumentError(
        "the consistency proof does not lead to the new root");
  }
  return absl::OkStatus();
}

void MemoryMerkleTree::AppendLeaf(absl::string_view data) {
  edge_.Append(MerkleLeafHash(data), &stored_);
}

StoredHashReader MemoryMerkleTree::Reader() const {
  return [this](int level, uint64_t n) -> absl::StatusOr<MerkleHash> {
    uint64_t index = StoredHashIndex(level, n);
    if (index >= stored_.size()) {
      return absl::OutOfRangeError(
          absl::StrCat("no stored hash at level ", level, " index ", n));
    }
    return stored_[index];
  };
}

}  // namespace garuda
