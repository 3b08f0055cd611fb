// The host side of the campaign a plugin receives (edm_campaign_v2, plugin.h): the effective
// campaign written as TOML by Campaign::to_toml, handed over as text and through four typed
// accessors over the same table. Keys are "section.key"; the scenario's own section is the table
// named after it. Nothing here names a campaign key, so keys added to the campaign reach plugins
// without a change here.
#include <cstring>
#include <sstream>
#include <string_view>

#include "edm/plugins.hpp"

namespace edm {

namespace {

const toml::table& table_of(const void* ctx) { return static_cast<const CampaignView*>(ctx)->table(); }

// "section.key" → the node, or nullptr. Section names are identifiers (the campaign refuses
// scenario names with other characters), so the first '.' separates them.
const toml::node* find(const void* ctx, const char* key) {
  const std::string_view k(key);
  const auto dot = k.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == k.size()) return nullptr;
  const toml::table* section = table_of(ctx).get_as<toml::table>(k.substr(0, dot));
  if (!section) return nullptr;
  const toml::node* n = section->get(k.substr(dot + 1));
  return n && !n->is_table() && !n->is_array() ? n : nullptr;
}

int get_double(const void* ctx, const char* key, double* out) {
  if (!ctx || !key || !out) return EDM_KEY_BAD_ARGUMENT;
  const toml::node* n = find(ctx, key);
  if (!n) return EDM_KEY_UNKNOWN;
  if (!n->is_number()) return EDM_KEY_WRONG_TYPE;
  *out = *n->value<double>();
  return EDM_KEY_OK;
}

int get_int(const void* ctx, const char* key, int64_t* out) {
  if (!ctx || !key || !out) return EDM_KEY_BAD_ARGUMENT;
  const toml::node* n = find(ctx, key);
  if (!n) return EDM_KEY_UNKNOWN;
  if (!n->is_integer()) return EDM_KEY_WRONG_TYPE;
  *out = *n->value<std::int64_t>();
  return EDM_KEY_OK;
}

int get_bool(const void* ctx, const char* key, int* out) {
  if (!ctx || !key || !out) return EDM_KEY_BAD_ARGUMENT;
  const toml::node* n = find(ctx, key);
  if (!n) return EDM_KEY_UNKNOWN;
  if (!n->is_boolean()) return EDM_KEY_WRONG_TYPE;
  *out = *n->value<bool>() ? 1 : 0;
  return EDM_KEY_OK;
}

int get_string(const void* ctx, const char* key, char* buf, size_t len, size_t* needed) {
  if (!ctx || !key || (!buf && len > 0)) return EDM_KEY_BAD_ARGUMENT;
  const toml::node* n = find(ctx, key);
  if (!n) return EDM_KEY_UNKNOWN;
  const auto* s = n->as_string();
  if (!s) return EDM_KEY_WRONG_TYPE;
  const std::string& v = s->get();
  if (needed) *needed = v.size() + 1;
  if (len < v.size() + 1) {
    if (len > 0) buf[0] = 0;
    return EDM_KEY_BUFFER_TOO_SHORT;
  }
  std::memcpy(buf, v.c_str(), v.size() + 1);
  return EDM_KEY_OK;
}

}  // namespace

CampaignView::CampaignView(const Campaign& campaign)
    : table_(campaign.to_toml()), scenario_(campaign.run.scenario), file_(campaign.file.string()) {
  std::ostringstream os;
  os << table_;
  text_ = os.str();
  c_.struct_size = sizeof(edm_campaign_v2);
  c_.scenario_size = sizeof(edm_scenario_v1);
  c_.ctx = this;
  c_.scenario = scenario_.c_str();
  c_.campaign_file = file_.c_str();
  c_.toml = text_.c_str();
  c_.get_double = &get_double;
  c_.get_int = &get_int;
  c_.get_bool = &get_bool;
  c_.get_string = &get_string;
}

}  // namespace edm
