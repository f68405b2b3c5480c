//===- RelocLink.cpp - Check and order records across modules -------------===//
//
// The loader provides one object per key, whatever module asks for it, so
// every record of a key must describe the same object: same type, kind,
// offset, constness, known contents and known address. This pass is that
// link-time check over all symbol tables of a module (the gpu.modules a
// frontend links into one compilation), and it orders each table's records
// by key so that printed IR and artifacts do not depend on creation order.
//
//===----------------------------------------------------------------------===//

#include "nabla/Dialect/Reloc/Transforms/Passes.h"

#include "nabla/Dialect/Reloc/IR/RelocOps.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

namespace nabla::reloc {
#define GEN_PASS_DEF_RELOCLINK
#include "nabla/Dialect/Reloc/Transforms/Passes.h.inc"
} // namespace nabla::reloc

using namespace mlir;
using namespace nabla::reloc;

namespace {

/// The first field in which two records of one key disagree, or "".
std::string describeConflict(GlobalOp a, GlobalOp b) {
  if (a.getGlobalType() != b.getGlobalType())
    return "type";
  if (a.getKind() != b.getKind() || a.getOffset() != b.getOffset())
    return "kind or offset";
  if (a.getConstant() != b.getConstant())
    return "constness";
  if (a.getAddress() != b.getAddress())
    return "address";
  if (a.getValue() && b.getValue() && *a.getValue() != *b.getValue())
    return "contents";
  return "";
}

struct RelocLink : public nabla::reloc::impl::RelocLinkBase<RelocLink> {
  using Base::Base;

  void runOnOperation() override {
    llvm::StringMap<GlobalOp> first;
    llvm::MapVector<Block *, SmallVector<GlobalOp>> tables;
    bool failed = false;
    getOperation().walk([&](GlobalOp record) {
      tables[record->getBlock()].push_back(record);
      auto [it, inserted] = first.insert({record.getKey(), record});
      if (inserted)
        return;
      std::string field = describeConflict(it->second, record);
      if (field.empty())
        return;
      InFlightDiagnostic diag = record.emitOpError("records host object \"")
                                << record.getKey() << "\" with another "
                                << field << " than reloc.global @"
                                << it->second.getSymName()
                                << "; the loader provides one object per key";
      diag.attachNote(it->second.getLoc()) << "first recorded here";
      failed = true;
    });
    if (failed)
      return signalPassFailure();
    // Records in key order, where the first one was.
    for (auto &[block, records] : tables) {
      SmallVector<GlobalOp> sorted(records);
      llvm::stable_sort(sorted, [](GlobalOp a, GlobalOp b) {
        return a.getKey() < b.getKey();
      });
      Operation *previous = records.front()->getPrevNode();
      for (GlobalOp record : sorted) {
        if (previous)
          record->moveAfter(previous);
        else
          record->moveBefore(&block->front());
        previous = record;
      }
    }
  }
};

} // namespace
