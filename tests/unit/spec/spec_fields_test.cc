// The module-spec field table (docs/formats.md, the field table) and its look-ups.
#include "spec/spec_fields.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

namespace hpfreeze {
namespace {

TEST(SpecFields, TableMatchesTheFormat) {
  ASSERT_EQ(kSpecFields.size(), 16u);
  EXPECT_EQ(kSpecFields[kParamsField].attribute, "params");
  EXPECT_EQ(kSpecFields[kParamsField].kind, FieldKind::kPlacementMap);
  std::set<std::string_view> attributes;
  std::set<std::string_view> keys;
  std::size_t injections = 0;
  for (const SpecField& f : kSpecFields) {
    attributes.insert(f.attribute);
    keys.insert(f.meta_key);
    if (f.section == FieldSection::kInjections) ++injections;
  }
  EXPECT_EQ(attributes.size(), kSpecFields.size());  // no two rows name one attribute
  EXPECT_EQ(keys.size(), kSpecFields.size());
  EXPECT_EQ(injections, 6u);  // inner_wrapper ... ep_size
}

TEST(SpecFields, LookUpByAttributeAndByMetaKey) {
  EXPECT_EQ(find_spec_field_by_attribute("_ep_size"), find_spec_field_by_meta_key("ep_size"));
  EXPECT_EQ(kSpecFields[*find_spec_field_by_attribute("_deferred_bias_params")].meta_key,
            "deferred_bias_params");
  EXPECT_EQ(kSpecFields[*find_spec_field_by_meta_key("in_src")].kind, FieldKind::kNamedPlacements);
  EXPECT_FALSE(find_spec_field_by_attribute("ep_size").has_value());  // meta key, not attribute
  EXPECT_FALSE(find_spec_field_by_meta_key("_ep_size").has_value());
  EXPECT_FALSE(find_spec_field_by_meta_key("match").has_value());
}

TEST(SpecFields, ExemptAttributesAndWriteConditions) {
  EXPECT_TRUE(is_exempt_spec_attribute("_tp_local_attr_plan"));
  EXPECT_TRUE(is_exempt_spec_attribute("_head_count_owner"));
  EXPECT_FALSE(is_exempt_spec_attribute("params"));
  EXPECT_FALSE(writes_falsy(FieldKind::kNameList));
  EXPECT_FALSE(writes_falsy(FieldKind::kDictCopy));
  EXPECT_FALSE(writes_falsy(FieldKind::kIntTruthy));
  EXPECT_TRUE(writes_falsy(FieldKind::kAttrList));
  EXPECT_TRUE(writes_falsy(FieldKind::kScalar));
}

}  // namespace
}  // namespace hpfreeze
