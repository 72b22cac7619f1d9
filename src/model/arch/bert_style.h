#pragma once
// The BERT encoder RoBERTa shares (bert.cpp): what a family changes in it. Private to model/arch.
#include <string>

#include "architectures.h"

namespace posgeom::model::bert_style {

// The MLM head's tensors: <dense>.weight/.bias, <norm>.weight/.bias, <bias>, <decoder>.weight.
struct HeadNames {
  std::string dense = "cls.predictions.transform.dense";
  std::string norm = "cls.predictions.transform.LayerNorm";
  std::string bias = "cls.predictions.bias";
  std::string decoder = "cls.predictions.decoder";
};

struct BertStyle {
  std::string model_type;         // "bert", "roberta"
  std::string architecture;       // its config's "architectures" entry
  bool roberta_positions = false;  // positions from pad_token_id + 1 over the non-padding tokens
  HeadNames head;
};

Architecture defineFamily(ArchitectureNames names, BertStyle style);

}  // namespace posgeom::model::bert_style
