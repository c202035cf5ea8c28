#include "lib/crypto/merkle.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace garuda {
namespace {

// The RFC 6962 test vectors of the Certificate Transparency project, as
// published in github.com/transparency-dev/merkle, proof/verify_test.go
// (variables leaves, roots, inclusionProofs, consistencyProofs). Data only:
// eight leaves, the root of each prefix, and proofs.
const char* const kLeavesHex[] = {
    "",
    "00",
    "10",
    "2021",
    "3031",
    "40414243",
    "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
};
const char* const kRootsHex[] = {
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};
struct ProofVector {
  uint64_t a;  // inclusion: the leaf index; consistency: the old size
  uint64_t size;
  std::vector<const char*> proof;
};
// In the source the leaf is 1-based; here it is the 0-based index.
const ProofVector kInclusion[] = {
    {0,
     8,
     {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
    {5,
     8,
     {"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
    {2,
     3,
     {"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"}},
    {1,
     5,
     {"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
};
const ProofVector kConsistency[] = {
    {1, 1, {}},
    {1,
     8,
     {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
    {6,
     8,
     {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
    {2,
     5,
     {"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
    {6,
     7,
     {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
      "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
};

MerkleHash FromHex(const char* hex) {
  return *HashFromBytes(absl::HexStringToBytes(hex));
}
std::vector<MerkleHash> FromHex(const std::vector<const char*>& hexes) {
  std::vector<MerkleHash> out;
  for (const char* hex : hexes) out.push_back(FromHex(hex));
  return out;
}

MemoryMerkleTree VectorTree(size_t count) {
  MemoryMerkleTree tree;
  for (size_t i = 0; i < count; ++i) {
    tree.AppendLeaf(absl::HexStringToBytes(kLeavesHex[i]));
  }
  return tree;
}

TEST(MerkleTest, EmptyTreeIsSha256OfNothing) {
  EXPECT_EQ(absl::BytesToHexString(HashBytes(MerkleEmptyTreeHash())),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(MerkleTest, RootsOfThePublishedVectors) {
  MemoryMerkleTree tree = VectorTree(8);
  MerkleEdge edge;
  for (size_t size = 1; size <= 8; ++size) {
    absl::StatusOr<MerkleHash> root = TreeRoot(size, tree.Reader());
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_EQ(*root, FromHex(kRootsHex[size - 1])) << "size " << size;
    edge.Append(MerkleLeafHash(absl::HexStringToBytes(kLeavesHex[size - 1])),
                nullptr);
    EXPECT_EQ(edge.Root(), FromHex(kRootsHex[size - 1])) << "edge " << size;
    absl::StatusOr<MerkleEdge> loaded = MerkleEdge::Load(size, tree.Reader());
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(loaded->Root(), edge.Root());
  }
}

// The auditor's form of Append writes the same hashes as the vector one.
TEST(MerkleTest, AppendIntoStoresWhatAppendStores) {
  MerkleEdge with_vector, with_buffer;
  for (int i = 0; i < 300; ++i) {
    const MerkleHash leaf = MerkleLeafHash(absl::StrCat("line ", i));
    std::vector<MerkleHash> stored;
    with_vector.Append(leaf, &stored);
    uint8_t buffer[64 * 32];
    const int count = with_buffer.AppendInto(leaf, buffer);
    ASSERT_EQ(count, static_cast<int>(stored.size())) << "leaf " << i;
    for (int j = 0; j < count; ++j) {
      EXPECT_EQ(std::memcmp(buffer + 32 * j, stored[j].data(), 32), 0)
          << "leaf " << i << " hash " << j;
    }
    EXPECT_EQ(with_buffer.Root(), with_vector.Root());
  }
}

TEST(MerkleTest, InclusionProofsOfThePublishedVectors) {
  MemoryMerkleTree tree = VectorTree(8);
  for (const ProofVector& v : kInclusion) {
    absl::StatusOr<std::vector<MerkleHash>> proof =
        InclusionProof(v.a, v.size, tree.Reader());
    ASSERT_TRUE(proof.ok()) << proof.status();
    EXPECT_EQ(*proof, FromHex(v.proof)) << v.a << " of " << v.size;
    MerkleHash leaf = MerkleLeafHash(absl::HexStringToBytes(kLeavesHex[v.a]));
    MerkleHash root = FromHex(kRootsHex[v.size - 1]);
    EXPECT_TRUE(
        VerifyInclusion(v.a, v.size, leaf, FromHex(v.proof), root).ok());
    // Wrong proofs: another index, another size, a flipped bit, a hash
    // missing or added, another leaf.
    std::vector<MerkleHash> good = FromHex(v.proof);
    EXPECT_FALSE(VerifyInclusion(v.a ^ 1, v.size, leaf, good, root).ok());
    EXPECT_FALSE(VerifyInclusion(v.a, v.size * 2, leaf, good, root).ok());
    EXPECT_FALSE(
        VerifyInclusion(v.a, v.size, MerkleLeafHash("x"), good, root).ok());
    for (size_t i = 0; i < good.size(); ++i) {
      std::vector<MerkleHash> bad = good;
      bad[i][0] ^= 8;
      EXPECT_FALSE(VerifyInclusion(v.a, v.size, leaf, bad, root).ok());
    }
    std::vector<MerkleHash> longer = good;
    longer.push_back(root);
    EXPECT_FALSE(VerifyInclusion(v.a, v.size, leaf, longer, root).ok());
    if (!good.empty()) {
      std::vector<MerkleHash> shorter(good.begin(), good.end() - 1);
      EXPECT_FALSE(VerifyInclusion(v.a, v.size, leaf, shorter, root).ok());
    }
  }
}

TEST(MerkleTest, ConsistencyProofsOfThePublishedVectors) {
  MemoryMerkleTree tree = VectorTree(8);
  for (const ProofVector& v : kConsistency) {
    absl::StatusOr<std::vector<MerkleHash>> proof =
        ConsistencyProof(v.a, v.size, tree.Reader());
    ASSERT_TRUE(proof.ok()) << proof.status();
    EXPECT_EQ(*proof, FromHex(v.proof)) << v.a << " to " << v.size;
    MerkleHash old_root = FromHex(kRootsHex[v.a - 1]);
    MerkleHash root = FromHex(kRootsHex[v.size - 1]);
    std::vector<MerkleHash> good = FromHex(v.proof);
    EXPECT_TRUE(VerifyConsistency(v.a, v.size, good, old_root, root).ok());
    if (good.empty()) continue;
    EXPECT_FALSE(VerifyConsistency(v.a, v.size, good, root, old_root).ok());
    EXPECT_FALSE(VerifyConsistency(v.a + 1, v.size, good, old_root, root).ok());
    EXPECT_FALSE(VerifyConsistency(v.a, v.size, {}, old_root, root).ok());
    for (size_t i = 0; i < good.size(); ++i) {
      std::vector<MerkleHash> bad = good;
      bad[i][0] ^= 16;
      EXPECT_FALSE(VerifyConsistency(v.a, v.size, bad, old_root, root).ok());
    }
    std::vector<MerkleHash> shorter(good.begin(), good.end() - 1);
    EXPECT_FALSE(VerifyConsistency(v.a, v.size, shorter, old_root, root).ok());
  }
}

TEST(MerkleTest, EdgeCasesOfConsistency) {
  MerkleHash a = MerkleLeafHash("a"), b = MerkleLeafHash("b");
  EXPECT_TRUE(VerifyConsistency(0, 5, {}, a, b).ok());
  EXPECT_TRUE(VerifyConsistency(3, 3, {}, a, a).ok());
  EXPECT_FALSE(VerifyConsistency(3, 3, {}, a, b).ok());  // a fork
  EXPECT_FALSE(VerifyConsistency(4, 3, {}, a, b).ok());  // time travel
  EXPECT_FALSE(VerifyConsistency(0, 1, {a}, a, b).ok());
}

// Every proof between every pair of sizes up to 70 verifies, and its first
// hash flipped does not: the generator and the verifier agree beyond the
// eight published leaves (Go's sumdb/tlog TestTree checks the same way).
TEST(MerkleTest, AllProofsUpTo70Leaves) {
  MemoryMerkleTree tree;
  std::vector<MerkleHash> roots, leaves;
  for (int i = 0; i < 70; ++i) {
    std::string data = absl::StrCat("leaf ", i);
    tree.AppendLeaf(data);
    leaves.push_back(MerkleLeafHash(data));
    roots.push_back(*TreeRoot(i + 1, tree.Reader()));
  }
  for (uint64_t size = 1; size <= 70; ++size) {
    for (uint64_t index = 0; index < size; ++index) {
      std::vector<MerkleHash> proof =
          *InclusionProof(index, size, tree.Reader());
      ASSERT_TRUE(
          VerifyInclusion(index, size, leaves[index], proof, roots[size - 1])
              .ok())
          << index << " in " << size;
      if (!proof.empty()) {
        proof[0][0] ^= 1;
        ASSERT_FALSE(
            VerifyInclusion(index, size, leaves[index], proof, roots[size - 1])
                .ok());
      }
    }
    for (uint64_t old = 1; old <= size; ++old) {
      std::vector<MerkleHash> proof =
          *ConsistencyProof(old, size, tree.Reader());
      ASSERT_TRUE(
          VerifyConsistency(old, size, proof, roots[old - 1], roots[size - 1])
              .ok())
          << old << " to " << size;
      if (!proof.empty()) {
        proof[0][0] ^= 1;
        ASSERT_FALSE(
            VerifyConsistency(old, size, proof, roots[old - 1], roots[size - 1])
                .ok());
      }
    }
  }
}

TEST(MerkleTest, StoredHashIndexLayout) {
  // Leaf 0, leaf 1, their parent, leaf 2, leaf 3, parent (2,3), root of 4.
  EXPECT_EQ(StoredHashIndex(0, 0), 0u);
  EXPECT_EQ(StoredHashIndex(0, 1), 1u);
  EXPECT_EQ(StoredHashIndex(1, 0), 2u);
  EXPECT_EQ(StoredHashIndex(0, 2), 3u);
  EXPECT_EQ(StoredHashIndex(0, 3), 4u);
  EXPECT_EQ(StoredHashIndex(1, 1), 5u);
  EXPECT_EQ(StoredHashIndex(2, 0), 6u);
  EXPECT_EQ(StoredHashCount(4), 7u);
  EXPECT_EQ(StoredHashCount(5), 8u);
}

}  // namespace
}  // namespace garuda
