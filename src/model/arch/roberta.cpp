// RoBERTa (and its fine-tunes): the BERT encoder (bert_style.h) whose positions start past
// the padding index and skip padding tokens, one token type, the MLM head under lm_head.
#include "bert_style.h"

namespace posgeom::model {

Architecture robertaArchitecture() {
  bert_style::HeadNames head{"lm_head.dense", "lm_head.layer_norm", "lm_head.bias", "lm_head.decoder"};
  return bert_style::defineFamily({"roberta", "RoBERTa", {"roberta."}}, {"roberta", "RobertaForMaskedLM", true, head});
}

}  // namespace posgeom::model
