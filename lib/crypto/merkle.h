// RFC 6962 Merkle trees over SHA-256: the hashes, the inclusion and
// consistency proofs (RFC 6962 section 2.1) and their verification (the
// algorithms of RFC 9162 section 2.1.3.2 and 2.1.4.2).
//
// A stored tree keeps every hash of every complete subtree, in the order
// they come into being as leaves are appended (the layout of Go's
// golang.org/x/mod/sumdb/tlog): leaf n's hash, then the hashes of the
// subtrees leaf n completes, lowest first. So the file of hashes only ever
// grows at its end, and any subtree hash, hence any proof, is O(log n)
// reads away.
#ifndef GARUDA_LIB_CRYPTO_MERKLE_H_
#define GARUDA_LIB_CRYPTO_MERKLE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/sha256.h"

namespace garuda {

using MerkleHash = Sha256Digest;

// SHA-256(0x00 || data).
MerkleHash MerkleLeafHash(absl::string_view data);
// SHA-256(0x01 || left || right).
MerkleHash MerkleNodeHash(const MerkleHash& left, const MerkleHash& right);
// SHA-256 of nothing: the root of the empty tree.
MerkleHash MerkleEmptyTreeHash();

absl::string_view HashBytes(const MerkleHash& hash);
// Exactly 32 bytes, else INVALID_ARGUMENT.
absl::StatusOr<MerkleHash> HashFromBytes(absl::string_view bytes);

// Where the hash of the subtree at `level` with index `n` (its leaves are
// n << level ... ((n + 1) << level) - 1) sits among the stored hashes.
uint64_t StoredHashIndex(int level, uint64_t n);
// How many hashes a tree of `size` leaves stores.
uint64_t StoredHashCount(uint64_t size);

// Reads one stored hash (level, n) of a tree.
using StoredHashReader =
    std::function<absl::StatusOr<MerkleHash>(int level, uint64_t n)>;

// The right edge of a tree: the hashes of the complete subtrees its size
// decomposes into, one per set bit of the size (at most 64). Enough to
// append leaves and to compute the root, without the rest of the tree.
class MerkleEdge {
 public:
  uint64_t size() const { return size_; }
  // Appends a leaf; `stored` (when given) receives the hashes the stored
  // tree gains: the leaf's hash, then those of the subtrees it completes.
  void Append(const MerkleHash& leaf_hash, std::vector<MerkleHash>* stored);
  // The same, the hashes written one after another (32 bytes each) to
  // `stored`, which has room for 1 + the trailing one bits of size()
  // (at most 64 hashes); returns how many. No allocation: the auditor calls
  // it once per line.
  int AppendInto(const MerkleHash& leaf_hash, uint8_t* stored);
  MerkleHash Root() const;
  // The edge of the stored tree of `size` leaves.
  static absl::StatusOr<MerkleEdge> Load(uint64_t size,
                                         const StoredHashReader& read);

 private:
  uint64_t size_ = 0;
  std::array<MerkleHash, 64> edge_{};  // edge_[level], for set bits only
};

// The root of the first `size` leaves of a stored tree.
absl::StatusOr<MerkleHash> TreeRoot(uint64_t size,
                                    const StoredHashReader& read);
// RFC 6962 PATH(index, D[0:size]): the inclusion proof of leaf `index`.
absl::StatusOr<std::vector<MerkleHash>> InclusionProof(
    uint64_t index, uint64_t size, const StoredHashReader& read);
// RFC 6962 PROOF(old_size, D[0:size]): the consistency proof.
absl::StatusOr<std::vector<MerkleHash>> ConsistencyProof(
    uint64_t old_size, uint64_t size, const StoredHashReader& read);

// OK when `proof` shows that `leaf_hash` is leaf `index` of the tree of
// `size` leaves with `root`; else INVALID_ARGUMENT saying why.
absl::Status VerifyInclusion(uint64_t index, uint64_t size,
                             const MerkleHash& leaf_hash,
                             const std::vector<MerkleHash>& proof,
                             const MerkleHash& root);
// OK when `proof` shows that the tree of `old_size` leaves with `old_root`
// is a prefix of the tree of `size` leaves with `root`.
absl::Status VerifyConsistency(uint64_t old_size, uint64_t size,
                               const std::vector<MerkleHash>& proof,
                               const MerkleHash& old_root,
                               const MerkleHash& root);

// A whole tree in memory (tests, small tools): its stored hashes.
class MemoryMerkleTree {
 public:
  void AppendLeaf(absl::string_view data);
  uint64_t size() const { return edge_.size(); }
  StoredHashReader Reader() const;

 private:
  MerkleEdge edge_;
  std::vector<MerkleHash> stored_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_CRYPTO_MERKLE_H_
