//===- SpecializedWorkgroupSize.cpp - Workgroup size set at launch --------===//
//
// A kernel compiled without a known block size has no LocalSize; upstream's
// conversion then reads gpu.block_dim from a WorkgroupSize built-in
// *variable*, which Vulkan forbids (the built-in must decorate a constant).
// The loads of that variable become references to a composite of three
// specialization constants, so that one SPIR-V binary serves every block
// size: the runtime specializes the pipeline with the launch's block size.
//
//===----------------------------------------------------------------------===//

#include "nabla/Conversion/GPUToSPIRV/GPUToSPIRV.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

void nabla::specializeWorkgroupSize(spirv::ModuleOp module) {
  spirv::GlobalVariableOp builtin;
  for (auto variable : module.getOps<spirv::GlobalVariableOp>()) {
    std::optional<StringRef> name = variable.getBuiltIn();
    if (name && *name == "WorkgroupSize")
      builtin = variable;
  }
  // A kernel that never reads its block size still needs one.
  bool unsized = false;
  for (auto function : module.getOps<spirv::FuncOp>())
    if (auto abi = function->getAttrOfType<spirv::EntryPointABIAttr>(
            spirv::getEntryPointABIAttrName()))
      unsized |= !abi.getWorkgroupSize();
  if (!builtin && !unsized)
    return;
  MLIRContext *context = module.getContext();
  OpBuilder builder(context);
  builder.setInsertionPointToStart(module.getBody());
  Type i32 = builder.getI32Type();
  Location loc = module.getLoc();
  SmallVector<Attribute, 3> constituents;
  for (unsigned d = 0; d < 3; ++d) {
    std::string name = std::string("nabla_workgroup_size_") + "xyz"[d];
    auto constant =
        spirv::SpecConstantOp::create(builder, loc, builder.getStringAttr(name),
                                      builder.getI32IntegerAttr(1));
    constant->setAttr("spec_id",
                      builder.getI32IntegerAttr(kWorkgroupSizeSpecId + d));
    constituents.push_back(FlatSymbolRefAttr::get(context, name));
  }
  auto vectorType = VectorType::get({3}, i32);
  auto composite = spirv::SpecConstantCompositeOp::create(
      builder, loc, TypeAttr::get(vectorType),
      builder.getStringAttr("nabla_workgroup_size"),
      builder.getArrayAttr(constituents));

  if (!builtin)
    return;
  // Every use is `spirv.Load (spirv.mlir.addressof @builtin)` (the
  // conversion's only way to read it).
  SmallVector<spirv::AddressOfOp> addresses;
  module.walk([&](spirv::AddressOfOp address) {
    if (address.getVariable() == builtin.getSymName())
      addresses.push_back(address);
  });
  for (spirv::AddressOfOp address : addresses) {
    for (Operation *user : llvm::make_early_inc_range(address->getUsers())) {
      auto load = dyn_cast<spirv::LoadOp>(user);
      if (!load)
        continue;
      OpBuilder at(load);
      Value size = spirv::ReferenceOfOp::create(
          at, load.getLoc(), vectorType,
          FlatSymbolRefAttr::get(composite.getSymNameAttr()));
      Value loaded = load.getResult();
      if (loaded.getType() != vectorType)
        size =
            spirv::BitcastOp::create(at, load.getLoc(), loaded.getType(), size);
      loaded.replaceAllUsesWith(size);
      load.erase();
    }
    if (address->use_empty())
      address.erase();
  }
  bool unused = true;
  module.walk([&](spirv::AddressOfOp address) {
    unused &= address.getVariable() != builtin.getSymName();
  });
  if (unused)
    builtin.erase();
}
