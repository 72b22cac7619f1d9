"""Reference fixtures from Hugging Face transformers itself, for posgeom's golden tests.

For each family: a tiny random model built from a config (transformers' own init),
saved with save_pretrained (safetensors, float32), then run in float64 on fixed ids,
recording posgeom's convention (DESIGN section 3): hidden.0 .. hidden.L where hidden.L
is the last block's output before any final norm, final_norm (the base model's last
hidden state) and logits where the family has them, and attention.<block> [B, H, T, T].
Run by tools/hf-goldens, never by the product or its tests. Writes
tests/fixtures/hf/<name>/{config.json, model.safetensors, golden.safetensors}; with
--real NAME DIR, tests/fixtures/real/NAME.golden.safetensors for a real checkpoint.
"""
import json
import pathlib
import sys

import torch
import transformers
from safetensors.torch import save_file

ROOT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "hf"
IDS_SHAPE = (2, 24)  # longer than every window and sliding window below
CONSTANT_TOKEN = 7  # constant_ids: one token repeated, so that content is the same at every position


def families():
    t = transformers
    common = dict(initializer_range=0.1)
    return {
        # Odd head count (3), learned positions, tied head.
        "hf-gpt2": (t.GPT2Config(n_layer=2, n_embd=48, n_head=3, n_positions=64, vocab_size=120, bos_token_id=0,
                                 eos_token_id=0, **common),
                    t.GPT2LMHeadModel, "h"),
        # Bidirectional encoder, no LM head (AutoModel), post-LN blocks.
        "hf-bert": (t.BertConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=3, intermediate_size=96,
                                 vocab_size=120, max_position_embeddings=64, **common),
                    t.BertModel, "encoder.layer"),
        # ALiBi with a head count that is not a power of two.
        "hf-bloom": (t.BloomConfig(n_layer=2, hidden_size=48, n_head=3, vocab_size=120, **common),
                     t.BloomForCausalLM, "transformer.h"),
        # Grouped-query heads (4 query, 2 key/value), untied head.
        "hf-llama": (t.LlamaConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                   intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                   tie_word_embeddings=False, **common),
                     t.LlamaForCausalLM, "model.layers"),
        # Qwen2: Llama with biases on q, k and v; grouped-query heads.
        "hf-qwen2": (t.Qwen2Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                   intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                   use_sliding_window=False, tie_word_embeddings=False, **common),
                     t.Qwen2ForCausalLM, "model.layers"),
        # Qwen2 with sliding windows (8 keys) from layer 1 on.
        "hf-qwen2-sliding": (t.Qwen2Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=4,
                                           num_key_value_heads=2, intermediate_size=80, vocab_size=120,
                                           max_position_embeddings=64, use_sliding_window=True, sliding_window=8,
                                           max_window_layers=1, tie_word_embeddings=False, **common),
                             t.Qwen2ForCausalLM, "model.layers"),
        # Llama-3.1's scaled RoPE (a context of 64 so that all three bands occur at head_dim 12).
        "hf-llama3": (t.LlamaConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                    intermediate_size=80, vocab_size=120, max_position_embeddings=256,
                                    rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                                     "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                     "original_max_position_embeddings": 64},
                                    tie_word_embeddings=True, **common),
                      t.LlamaForCausalLM, "model.layers"),
        # YaRN: a base of 100 so that the ramp between kept and interpolated pairs falls inside
        # head_dim 12 (pairs 0 kept, 1 half, 2+ slowed by 4 over a context of 16), cos and sin
        # times 0.1 ln 4 + 1.
        "hf-llama-yarn": (t.LlamaConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                        intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                        rope_parameters={"rope_type": "yarn", "rope_theta": 100.0, "factor": 4.0,
                                                         "original_max_position_embeddings": 16},
                                        tie_word_embeddings=False, **common),
                          t.LlamaForCausalLM, "model.layers"),
        # longrope (Phi-3.5-128k's): a pretraining context of 16, so the 24 test positions take
        # the long factors, one per pair of the half of each 12-wide head that turns; cos and
        # sin times sqrt(1 + ln 4 / ln 16).
        "hf-phi3-longrope": (t.Phi3Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                          intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                          original_max_position_embeddings=16, partial_rotary_factor=0.5,
                                          rope_parameters={"rope_type": "longrope", "rope_theta": 100.0,
                                                           "short_factor": [1.0, 1.5, 2.0],
                                                           "long_factor": [1.0, 4.0, 9.0]},
                                          pad_token_id=0, bos_token_id=1, eos_token_id=2, **common),
                             t.Phi3ForCausalLM, "model.layers"),
        # Linear position interpolation, with biases on q, k, v and o (attention_bias).
        "hf-llama-linear": (t.LlamaConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4,
                                          num_key_value_heads=4, intermediate_size=80, vocab_size=120,
                                          max_position_embeddings=64, attention_bias=True,
                                          rope_parameters={"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0},
                                          tie_word_embeddings=False, **common),
                            t.LlamaForCausalLM, "model.layers"),
        # Dynamic NTK scaling, active: the 24 positions exceed max_position_embeddings 16.
        "hf-llama-dynamic": (t.LlamaConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4,
                                           num_key_value_heads=2, intermediate_size=80, vocab_size=120,
                                           max_position_embeddings=16,
                                           rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
                                           tie_word_embeddings=False, **common),
                             t.LlamaForCausalLM, "model.layers"),
        # Mistral: every layer within a sliding window of 8 keys.
        "hf-mistral": (t.MistralConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                       intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                       sliding_window=8, tie_word_embeddings=False, **common),
                       t.MistralForCausalLM, "model.layers"),
        # Qwen3: per-head q/k norms, head_dim 16 apart from hidden_size / heads = 12, all biases.
        "hf-qwen3": (t.Qwen3Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                   head_dim=16, intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                   attention_bias=True, tie_word_embeddings=False, **common),
                     t.Qwen3ForCausalLM, "model.layers"),
        # Gemma: 1 + w norms, sqrt(d) embeddings, GeGLU, one key head for four query heads.
        "hf-gemma": (t.GemmaConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=1,
                                   head_dim=16, intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                   **common),
                     t.GemmaForCausalLM, "model.layers"),
        # Gemma-2: sandwich norms, layer 0 sliding (8 keys), scale 20^-1/2, caps small enough to bite.
        "hf-gemma2": (t.Gemma2Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                     head_dim=16, intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                     sliding_window=8, query_pre_attn_scalar=20, attn_logit_softcapping=1.5,
                                     final_logit_softcapping=2.0, **common),
                      t.Gemma2ForCausalLM, "model.layers"),
        # GPT-NeoX / Pythia: a quarter of each 16-wide head turns, parallel residual, fused per-head QKV.
        "hf-gpt-neox": (t.GPTNeoXConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=3, intermediate_size=96,
                                        vocab_size=120, max_position_embeddings=64, rotary_pct=0.25, rotary_emb_base=10000,
                                        use_parallel_residual=True, **common),
                        t.GPTNeoXForCausalLM, "gpt_neox.layers"),
        # The same with the serial residual and half of each head turning.
        "hf-gpt-neox-serial": (t.GPTNeoXConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=3,
                                               intermediate_size=96, vocab_size=120, max_position_embeddings=64,
                                               rotary_pct=0.5, use_parallel_residual=False, **common),
                               t.GPTNeoXForCausalLM, "gpt_neox.layers"),
        # GPT-Neo (TinyStories): global and local (8 keys) layers alternating, no 1/sqrt(dh).
        "hf-gpt-neo": (t.GPTNeoConfig(num_layers=2, hidden_size=48, num_heads=3, intermediate_size=96, vocab_size=120,
                                      max_position_embeddings=64, attention_types=[[["global", "local"], 1]],
                                      window_size=8, **common),
                       t.GPTNeoForCausalLM, "transformer.h"),
        # RoBERTa: BERT with positions counted from padding_idx + 1 over the non-padding tokens.
        "hf-roberta": (t.RobertaConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=3, intermediate_size=96,
                                       vocab_size=120, max_position_embeddings=64, type_vocab_size=1, pad_token_id=1,
                                       **common),
                       t.RobertaModel, "encoder.layer"),
        # OPT: positions two rows into their table, pre-LN, ReLU.
        "hf-opt": (t.OPTConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=3, ffn_dim=96, vocab_size=120,
                               max_position_embeddings=64, word_embed_proj_dim=48, **common),
                   t.OPTForCausalLM, "model.decoder.layers"),
        # OPT-350m's shape: post-LN blocks, embeddings narrower than the blocks (project_in/out).
        "hf-opt-350m": (t.OPTConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=3, ffn_dim=96,
                                    vocab_size=120, max_position_embeddings=64, word_embed_proj_dim=32,
                                    do_layer_norm_before=False, **common),
                        t.OPTForCausalLM, "model.decoder.layers"),
        # GPT-J: interleaved pairs turn on the first 8 of each 16-wide head; attention and MLP in parallel.
        "hf-gptj": (t.GPTJConfig(n_layer=2, n_embd=48, n_head=3, n_inner=96, vocab_size=120, n_positions=64,
                                 rotary_dim=8, bos_token_id=0, eos_token_id=0, **common),
                    t.GPTJForCausalLM, "transformer.h"),
        # Phi-3: fused qkv_proj and gate_up_proj, half of each 16-wide head turning, a sliding window of 8.
        "hf-phi3": (t.Phi3Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=3, num_key_value_heads=3,
                                 intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                 original_max_position_embeddings=64, partial_rotary_factor=0.5, sliding_window=8,
                                 pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False, **common),
                    t.Phi3ForCausalLM, "model.layers"),
        # OLMo: parameter-free LayerNorms, q, k and v clamped at 0.5 (tight enough to act).
        "hf-olmo": (t.OlmoConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                 intermediate_size=80, vocab_size=120, max_position_embeddings=64, clip_qkv=0.5,
                                 pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False, **common),
                    t.OlmoForCausalLM, "model.layers"),
        # Granite: Llama with every constant factor away from 1 (embeddings x 3, logits x 0.2
        # instead of 1/sqrt(12), block outputs x 0.5 into the residual, logits / 4).
        "hf-granite": (t.GraniteConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                       intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                       embedding_multiplier=3.0, attention_multiplier=0.2, residual_multiplier=0.5,
                                       logits_scaling=4.0, tie_word_embeddings=False, **common),
                       t.GraniteForCausalLM, "model.layers"),
        # SmolLM3: every second block NoPE (q and k not turned), windows of 8 keys in those.
        "hf-smollm3": (t.SmolLM3Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                       intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                       no_rope_layer_interval=2, use_sliding_window=True, sliding_window=8,
                                       pad_token_id=0, bos_token_id=1, eos_token_id=2, **common),
                       t.SmolLM3ForCausalLM, "model.layers"),
        # Phi-2 style: half of each 12-wide head turns, attention and a dense MLP in parallel
        # off one LayerNorm, biases everywhere, an LM head with a bias.
        "hf-phi": (t.PhiConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, intermediate_size=80,
                               vocab_size=120, max_position_embeddings=64, partial_rotary_factor=0.5,
                               pad_token_id=0, bos_token_id=1, eos_token_id=2, **common),
                   t.PhiForCausalLM, "model.layers"),
        # StableLM: LayerNorms with weights and biases, half of each 12-wide head turning,
        # biases on q, k and v only, grouped key/value heads.
        "hf-stablelm": (t.StableLmConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                         intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                         partial_rotary_factor=0.5, use_qkv_bias=True,
                                         pad_token_id=0, bos_token_id=1, eos_token_id=2, **common),
                        t.StableLmForCausalLM, "model.layers"),
        # StableLM-2-12B's shape: each head's q and k through a bias-free LayerNorm of its own
        # (one tensor a head, weights drawn at random below), attention and MLP in parallel off
        # the input norm, a quarter of each 16-wide head turning, grouped heads, no qkv biases.
        "hf-stablelm-2-12b": (t.StableLmConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                                               num_key_value_heads=2, intermediate_size=80, vocab_size=120,
                                               max_position_embeddings=64, partial_rotary_factor=0.25,
                                               qk_layernorm=True, use_parallel_residual=True,
                                               pad_token_id=0, bos_token_id=1, eos_token_id=2, **common),
                              t.StableLmForCausalLM, "model.layers"),
        # Starcoder2: LayerNorms, a dense tanh-GELU MLP, biases on every map, grouped heads,
        # a sliding window of 8 in every layer, the head tied.
        "hf-starcoder2": (t.Starcoder2Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                             intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                             sliding_window=8, bos_token_id=1, eos_token_id=2, **common),
                          t.Starcoder2ForCausalLM, "model.layers"),
        # Cohere: weight-only LayerNorms, attention and MLP in parallel off one norm, RoPE on
        # interleaved pairs, grouped heads, a tied head, logits x 0.25.
        "hf-cohere": (t.CohereConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                     intermediate_size=80, vocab_size=120, max_position_embeddings=64, logit_scale=0.25,
                                     pad_token_id=0, bos_token_id=1, eos_token_id=2, **common),
                      t.CohereForCausalLM, "model.layers"),
        # Command-R+'s shape: Cohere with each head's q and k through a LayerNorm of its own
        # (weights per head, drawn at random below), grouped heads.
        "hf-cohere-qk-norm": (t.CohereConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4,
                                             num_key_value_heads=2, intermediate_size=80, vocab_size=120,
                                             max_position_embeddings=64, logit_scale=0.25, use_qk_norm=True,
                                             pad_token_id=0, bos_token_id=1, eos_token_id=2, **common),
                              t.CohereForCausalLM, "model.layers"),
        # Gemma-3 (text): three blocks local, global, local (layer_types), the local ones with a
        # window of 8 and their own RoPE base, the global one's RoPE linearly scaled; per-head
        # q/k norms (1 + w), sandwich norms, logits x query_pre_attn_scalar^-1/2, no caps.
        "hf-gemma3": (t.Gemma3TextConfig(num_hidden_layers=3, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                         head_dim=16, intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                         sliding_window=8, query_pre_attn_scalar=20,
                                         layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                                         rope_parameters={"full_attention": {"rope_type": "linear", "factor": 2.0,
                                                                             "rope_theta": 10000.0},
                                                          "sliding_attention": {"rope_type": "default", "rope_theta": 100.0}},
                                         **common),
                      t.Gemma3ForCausalLM, "model.layers"),
        # OLMo-2: norms after attention and after the MLP only, q and k RMSNormed over all
        # heads together (three query heads, one key/value head, biases on every map).
        "hf-olmo2": (t.Olmo2Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=3, num_key_value_heads=1,
                                   intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                                   attention_bias=True, pad_token_id=0, bos_token_id=1, eos_token_id=2, **common),
                     t.Olmo2ForCausalLM, "model.layers"),
        # OLMoE: OLMo-2's q/k norms over all heads (four query heads, two key/value heads) in
        # pre-norm blocks, each a mixture of 4 experts of 32, 2 a token, not renormalised.
        "hf-olmoe": (t.OlmoeConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                   intermediate_size=32, num_experts=4, num_experts_per_tok=2, norm_topk_prob=False,
                                   vocab_size=120, max_position_embeddings=64, pad_token_id=0, bos_token_id=1,
                                   eos_token_id=2, **common),
                     t.OlmoeForCausalLM, "model.layers"),
        # MPT: six heads (MPT's own ALiBi slopes where the head count is not a power of two),
        # q, k and v clamped to 0.5, logits x softmax_scale 0.5, bias-free norms and maps.
        "hf-mpt": (t.MptConfig(n_layers=2, d_model=48, n_heads=6, max_seq_len=64, vocab_size=120,
                               attn_config={"clip_qkv": 0.5, "softmax_scale": 0.5}, **common),
                   t.MptForCausalLM, "transformer.blocks"),
        # Mixtral: 4 experts (w1, w3, w2 under block_sparse_moe), 2 a token, renormalised.
        "hf-mixtral": (t.MixtralConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                       intermediate_size=40, num_local_experts=4, num_experts_per_tok=2,
                                       vocab_size=120, max_position_embeddings=64, **common),
                       t.MixtralForCausalLM, "model.layers"),
        # Qwen2-MoE: block 0 a mixture of 4 experts (2 a token, not renormalised) and a gated
        # shared expert, block 1 dense (mlp_only_layers); biases on q, k and v.
        "hf-qwen2-moe": (t.Qwen2MoeConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                          intermediate_size=80, moe_intermediate_size=32, shared_expert_intermediate_size=56,
                                          num_experts=4, num_experts_per_tok=2, norm_topk_prob=False, mlp_only_layers=[1],
                                          vocab_size=120, max_position_embeddings=64, **common),
                         t.Qwen2MoeForCausalLM, "model.layers"),
        # Qwen3-MoE: per-head q/k norms, head_dim 16, 4 experts of 32, 2 a token, renormalised.
        "hf-qwen3-moe": (t.Qwen3MoeConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                          head_dim=16, intermediate_size=80, moe_intermediate_size=32, num_experts=4,
                                          num_experts_per_tok=2, norm_topk_prob=True, vocab_size=120,
                                          max_position_embeddings=64, **common),
                         t.Qwen3MoeForCausalLM, "model.layers"),
        # T5's encoder, read from a full T5 (its decoder and head left out): heads 16 wide (64 =
        # 4 x 16 is not d_model 48), a ReLU MLP, 8 buckets (2 exact a side, then logarithmic
        # out to 20): the 24 test positions reach beyond the last bucket.
        "hf-t5": (t.T5Config(num_layers=2, num_decoder_layers=1, d_model=48, d_kv=16, num_heads=4, d_ff=80,
                             vocab_size=120, relative_attention_num_buckets=8, relative_attention_max_distance=20,
                             feed_forward_proj="relu", initializer_factor=1.0),
                  t.T5ForConditionalGeneration, "encoder.block"),
        # mT5's encoder model: the gated GELU MLP, 16 buckets out to 12, three heads.
        "hf-mt5": (t.MT5Config(num_layers=2, d_model=48, d_kv=16, num_heads=3, d_ff=64, vocab_size=120,
                               relative_attention_num_buckets=16, relative_attention_max_distance=12,
                               feed_forward_proj="gated-gelu", initializer_factor=1.0),
                   t.MT5EncoderModel, "encoder.block"),
        # ModernBERT: blocks global, local, local (every 3rd global), local blocks seeing 4 keys
        # on each side of the query (local_attention 8) by RoPE base 100, global ones by
        # 1000; no biases (the released models'), GLU MLP, the MLM head tied.
        "hf-modernbert": (t.ModernBertConfig(num_hidden_layers=3, hidden_size=48, num_attention_heads=3,
                                             intermediate_size=40, vocab_size=120, max_position_embeddings=64,
                                             local_attention=8, global_attn_every_n_layers=3,
                                             global_rope_theta=1000.0, local_rope_theta=100.0,
                                             pad_token_id=0, bos_token_id=1, eos_token_id=2, cls_token_id=1,
                                             sep_token_id=2, **common),
                          t.ModernBertForMaskedLM, "layers"),
        # The same with every bias (norms, attention, MLP, the head's dense map, the decoder)
        # and an untied decoder; local_attention 6 (3 keys a side), every other block global.
        "hf-modernbert-biased": (t.ModernBertConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4,
                                                    intermediate_size=40, vocab_size=120, max_position_embeddings=64,
                                                    local_attention=6, global_attn_every_n_layers=2,
                                                    global_rope_theta=1000.0, local_rope_theta=100.0,
                                                    norm_bias=True, attention_bias=True, mlp_bias=True,
                                                    classifier_bias=True, decoder_bias=True, tie_word_embeddings=False,
                                                    pad_token_id=0, bos_token_id=1, eos_token_id=2, cls_token_id=1,
                                                    sep_token_id=2, **common),
                                 t.ModernBertForMaskedLM, "layers"),
        # Falcon-40B's layout: new_decoder_architecture, 4 query heads in 2 key/value groups
        # ([group][q q | k | v] rows), attention and MLP in parallel each through its own norm.
        "hf-falcon": (t.FalconConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, num_kv_heads=2,
                                     new_decoder_architecture=True, parallel_attn=True, bias=False, alibi=False,
                                     ffn_hidden_size=80, vocab_size=120, max_position_embeddings=64,
                                     rope_parameters={"rope_type": "default", "rope_theta": 100.0},
                                     bos_token_id=0, eos_token_id=0, **common),
                      t.FalconForCausalLM, "h"),
        # Falcon2-11B's: the new architecture with one norm for both (num_ln_in_parallel_attn 1),
        # biases on every map, 6 heads in 3 groups.
        "hf-falcon2": (t.FalconConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=6, num_kv_heads=3,
                                      new_decoder_architecture=True, parallel_attn=True, num_ln_in_parallel_attn=1,
                                      bias=True, alibi=False, ffn_hidden_size=80, vocab_size=120,
                                      max_position_embeddings=64,
                                      rope_parameters={"rope_type": "default", "rope_theta": 100.0},
                                      bos_token_id=0, eos_token_id=0, **common),
                       t.FalconForCausalLM, "h"),
        # Falcon-7B's: multi_query (every query head, then one k and one v), parallel blocks off
        # input_layernorm, no biases, 3 heads.
        "hf-falcon-7b": (t.FalconConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=3,
                                        new_decoder_architecture=False, multi_query=True, parallel_attn=True,
                                        bias=False, alibi=False, vocab_size=120, max_position_embeddings=64,
                                        rope_parameters={"rope_type": "default", "rope_theta": 100.0},
                                        bos_token_id=0, eos_token_id=0, **common),
                         t.FalconForCausalLM, "h"),
        # The older multi-head layout ([head][q | k | v]) in series (post_attention_layernorm),
        # with biases: Falcon-RW's blocks with RoPE.
        "hf-falcon-serial": (t.FalconConfig(num_hidden_layers=2, hidden_size=48, num_attention_heads=4,
                                            new_decoder_architecture=False, multi_query=False, parallel_attn=False,
                                            bias=True, alibi=False, ffn_hidden_size=64, vocab_size=120,
                                            max_position_embeddings=64,
                                            rope_parameters={"rope_type": "default", "rope_theta": 100.0},
                                            bos_token_id=0, eos_token_id=0, **common),
                             t.FalconForCausalLM, "h"),
        # gpt-oss: sinks (drawn wide below, so that some heads send most of their weight there),
        # windows of 8 in blocks 0 and 2, YaRN (base 100, pretraining context 16, truncate
        # false), biases on q, k, v, o, 4 experts with biases, 2 a token, the SwiGLU clamped at
        # 0.5 so that the clamp acts.
        "hf-gpt-oss": (t.GptOssConfig(num_hidden_layers=3, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                      head_dim=12, intermediate_size=32, num_local_experts=4, num_experts_per_tok=2,
                                      vocab_size=120, max_position_embeddings=64, sliding_window=8, swiglu_limit=0.5,
                                      rope_parameters={"rope_type": "yarn", "rope_theta": 100.0, "factor": 4.0,
                                                       "original_max_position_embeddings": 16, "beta_fast": 32.0,
                                                       "beta_slow": 1.0, "truncate": False},
                                      **common),
                       t.GptOssForCausalLM, "model.layers"),
        # Gemma-3's multimodal checkpoint (Gemma3ForConditionalGeneration): hf-gemma3's language
        # model under text_config and model.language_model., beside a one-layer vision tower and
        # its projector (left out); run on text alone.
        "hf-gemma3-multimodal": (t.Gemma3Config(
            text_config=dict(num_hidden_layers=3, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                             head_dim=16, intermediate_size=80, vocab_size=120, max_position_embeddings=64,
                             sliding_window=8, query_pre_attn_scalar=20,
                             layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                             rope_parameters={"full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0},
                                              "sliding_attention": {"rope_type": "default", "rope_theta": 100.0}},
                             initializer_range=0.1),
            vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                               image_size=28, patch_size=14),
            mm_tokens_per_image=4, image_token_index=119, boi_token_index=117, eoi_token_index=118, **common),
            t.Gemma3ForConditionalGeneration, "model.language_model.layers"),
        # OLMo-3: OLMo-2's blocks with windows of 8 in three blocks of four and RoPE per layer
        # type: YaRN (base 100, pretraining context 16) in the global block, base 1000 in the
        # windowed ones.
        "hf-olmo3": (t.Olmo3Config(num_hidden_layers=4, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                   intermediate_size=80, vocab_size=120, max_position_embeddings=64, sliding_window=8,
                                   rope_parameters={"full_attention": {"rope_type": "yarn", "rope_theta": 100.0,
                                                                       "factor": 4.0,
                                                                       "original_max_position_embeddings": 16},
                                                    "sliding_attention": {"rope_type": "default", "rope_theta": 1000.0}},
                                   tie_word_embeddings=False, pad_token_id=1, eos_token_id=0, **common),
                     t.Olmo3ForCausalLM, "model.layers"),
        # Cohere2: Cohere's blocks with windows of 8 in three blocks of four and RoPE (base 100)
        # there only; blocks 3 and 7 global and NoPE; logits times 0.25.
        "hf-cohere2": (t.Cohere2Config(num_hidden_layers=8, hidden_size=48, num_attention_heads=4, num_key_value_heads=2,
                                       intermediate_size=80, vocab_size=120, max_position_embeddings=64, sliding_window=8,
                                       logit_scale=0.25, rope_parameters={"rope_type": "default", "rope_theta": 100.0},
                                       pad_token_id=0, bos_token_id=1, eos_token_id=2, **common),
                       t.Cohere2ForCausalLM, "model.layers"),
        # DeBERTa-v3's shape: disentangled attention (c2p and p2c) through the block's own maps
        # (share_att_key), the relative embeddings LayerNormed, distances in 8 log buckets out
        # to 20 (the 24 test positions reach past both), no absolute positions, no token types.
        "hf-deberta-v3": (t.DebertaV2Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, intermediate_size=80,
                                            vocab_size=120, max_position_embeddings=64, type_vocab_size=0,
                                            relative_attention=True, position_buckets=8, max_relative_positions=20,
                                            pos_att_type=["p2c", "c2p"], share_att_key=True, norm_rel_ebd="layer_norm",
                                            position_biased_input=False, pad_token_id=0, bos_token_id=1,
                                            eos_token_id=2, **common),
                          t.DebertaV2Model, "encoder.layer"),
        # DeBERTa-v2's older shape: pos_key_proj and pos_query_proj of their own, no buckets (12
        # distances a side, clamped), learned absolute positions and token type 0 too, embeddings
        # 32 wide projected to 48, three heads.
        "hf-deberta-v2": (t.DebertaV2Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=3, intermediate_size=80,
                                            vocab_size=120, max_position_embeddings=64, type_vocab_size=2,
                                            relative_attention=True, position_buckets=-1, max_relative_positions=12,
                                            pos_att_type="c2p|p2c", share_att_key=False, norm_rel_ebd="none",
                                            position_biased_input=True, embedding_size=32, pad_token_id=0,
                                            bos_token_id=1, eos_token_id=2, **common),
                          t.DebertaV2Model, "encoder.layer"),
        # DeepSeek-V3: latent attention with a query latent (24) and a key-value latent (16),
        # heads of 12 unrotated + 8 rotary dims (interleaved pairs), values of 10; YaRN (base
        # 100, factor 4 over 16) with mscale 1 and mscale_all_dim 0.8 (so the logit scale and
        # the cos/sin factor both move), biases on q_a, kv_a and o; block 0 dense, blocks 1
        # and 2 sigmoid-routed over 8 experts in 4 groups (2 groups a token, 2 experts of
        # them, the correction bias drawn wide), renormalised, times 2.5, one shared expert.
        "hf-deepseek-v3": (t.DeepseekV3Config(num_hidden_layers=3, hidden_size=48, num_attention_heads=4,
                                              num_key_value_heads=4, intermediate_size=80, moe_intermediate_size=24,
                                              n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2, n_group=4,
                                              topk_group=2, first_k_dense_replace=1, routed_scaling_factor=2.5,
                                              kv_lora_rank=16, q_lora_rank=24, qk_rope_head_dim=8, qk_nope_head_dim=12,
                                              v_head_dim=10, attention_bias=True, vocab_size=120,
                                              max_position_embeddings=64,
                                              rope_parameters={"rope_type": "yarn", "rope_theta": 100.0, "factor": 4.0,
                                                               "original_max_position_embeddings": 16, "mscale": 1.0,
                                                               "mscale_all_dim": 0.8, "beta_fast": 32.0, "beta_slow": 1.0},
                                              **common),
                           t.DeepseekV3ForCausalLM, "model.layers"),
        # DeepSeek-V3 without the query latent or interleaving (rope_interleave false: pairs
        # (j, j + 4)), plain RoPE, one group, not renormalised, every block sparse.
        "hf-deepseek-v3-plain": (t.DeepseekV3Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=3,
                                                    num_key_value_heads=3, intermediate_size=80, moe_intermediate_size=24,
                                                    n_routed_experts=4, n_shared_experts=2, num_experts_per_tok=2,
                                                    n_group=1, topk_group=1, first_k_dense_replace=0, norm_topk_prob=False,
                                                    kv_lora_rank=16, q_lora_rank=None, qk_rope_head_dim=8,
                                                    qk_nope_head_dim=8, v_head_dim=16, rope_interleave=False,
                                                    vocab_size=120, max_position_embeddings=64,
                                                    rope_parameters={"rope_type": "default", "rope_theta": 1000.0},
                                                    **common),
                                 t.DeepseekV3ForCausalLM, "model.layers"),
        # DeepSeek-V2-Lite's shape: no query latent, RoPE turned in float32 as complex numbers,
        # greedy softmax routing over 8 experts (2 a token, not renormalised), two shared
        # experts, block 0 dense.
        "hf-deepseek-v2": (t.DeepseekV2Config(num_hidden_layers=3, hidden_size=48, num_attention_heads=4,
                                              num_key_value_heads=4, intermediate_size=80, moe_intermediate_size=24,
                                              n_routed_experts=8, n_shared_experts=2, num_experts_per_tok=2,
                                              first_k_dense_replace=1, topk_method="greedy", kv_lora_rank=16,
                                              q_lora_rank=None, qk_rope_head_dim=8, qk_nope_head_dim=12, v_head_dim=10,
                                              vocab_size=120, max_position_embeddings=64,
                                              rope_parameters={"rope_type": "default", "rope_theta": 100.0},
                                              **common),
                           t.DeepseekV2ForCausalLM, "model.layers"),
        # DeepSeek-V2's full shape: a query latent, group-limited greedy routing (4 groups of
        # 2, the best 2 groups a token), times 16, YaRN with mscale = mscale_all_dim 0.707.
        "hf-deepseek-v2-grouped": (t.DeepseekV2Config(num_hidden_layers=2, hidden_size=48, num_attention_heads=4,
                                                      num_key_value_heads=4, intermediate_size=80,
                                                      moe_intermediate_size=24, n_routed_experts=8, n_shared_experts=1,
                                                      num_experts_per_tok=2, n_group=4, topk_group=2,
                                                      first_k_dense_replace=0, topk_method="group_limited_greedy",
                                                      routed_scaling_factor=16.0, kv_lora_rank=16, q_lora_rank=24,
                                                      qk_rope_head_dim=8, qk_nope_head_dim=12, v_head_dim=10,
                                                      vocab_size=120, max_position_embeddings=64,
                                                      rope_parameters={"rope_type": "yarn", "rope_theta": 100.0,
                                                                       "factor": 4.0,
                                                                       "original_max_position_embeddings": 16,
                                                                       "mscale": 0.707, "mscale_all_dim": 0.707,
                                                                       "beta_fast": 32.0, "beta_slow": 1.0},
                                                      **common),
                                   t.DeepseekV2ForCausalLM, "model.layers"),
    }


# Encoders whose last hidden state transformers returns through a final norm (T5's
# final_layer_norm), without an LM head to mark it.
FINAL_NORM_WITHOUT_HEAD = {"hf-t5", "hf-mt5"}


def blocks_of(model, path):
    module = model
    for part in path.split("."):
        if not hasattr(module, part):
            # causal LMs nest the base model: try under it
            module = getattr(module, model.base_model_prefix)
        module = getattr(module, part)
    return module


ROUTING_MARGIN = 0.05  # of the largest router logit: far beyond bfloat16's rounding of it


def routing_choices(router, logits):
    """The scores a router ranks and how many it takes of each: its logits and top_k, or for
    DeepSeek's group-limited routers the groups' scores (top_k groups) and then the scores of
    the experts in the groups chosen (top_k experts)."""
    groups = getattr(router, "num_group", None) or 1
    bias = getattr(router, "e_score_correction_bias", None)
    method = getattr(router, "topk_method", None)
    if bias is None and method is None:
        return [(logits, router.top_k)]
    logits = logits.to(torch.float32)
    scores = logits.sigmoid() + bias if bias is not None else logits.softmax(-1)
    if groups == 1 or method == "greedy":
        return [(scores, router.top_k)]
    grouped = scores.reshape(scores.shape[:-1] + (groups, -1))
    group_scores = grouped.topk(2, -1).values.sum(-1) if bias is not None else grouped.max(-1).values
    chosen = group_scores.topk(router.topk_group, -1).indices
    mask = torch.zeros_like(group_scores, dtype=torch.bool).scatter(-1, chosen, True)
    below = float(scores.min()) - 1.0 if bias is not None else 0.0  # transformers' -inf, finite for the gap
    masked = grouped.masked_fill(~mask[..., None], below).reshape(scores.shape)
    return [(group_scores, router.topk_group), (masked, router.top_k)]


def decisive_ids(model, ids, vocab_size):
    """A mixture's routing is discontinuous: a token whose k-th and (k+1)-th router logits
    (float64) lie closer than ROUTING_MARGIN of the largest may take other experts in any
    reduced precision, transformers' own bfloat16 run included, and then the golden says
    nothing about arithmetic. Such tokens are drawn again until none is left; ids of a model
    without routers are returned as they are."""
    routers = [m for _, m in model.named_modules() if hasattr(m, "top_k") and hasattr(m, "weight")
               and getattr(m, "weight").dim() == 2]
    if not routers:
        return ids
    generator = torch.Generator().manual_seed(2)
    for _ in range(200):
        close = torch.zeros(ids.shape, dtype=torch.bool)

        def hook(module, inputs, output):
            logits = (output[0] if isinstance(output, tuple) else output).reshape(ids.shape + (-1,))
            for choice, k in routing_choices(module, logits):
                ranked = choice.sort(-1, descending=True).values
                gap = ranked[..., k - 1] - ranked[..., k]
                close.logical_or_(gap < ROUTING_MARGIN * ranked.abs().max(-1).values)

        handles = [r.register_forward_hook(hook) for r in routers]
        with torch.no_grad():
            model(input_ids=ids)
        for h in handles:
            h.remove()
        if not close.any():
            return ids
        ids = ids.clone()
        ids[close] = torch.randint(0, vocab_size, (int(close.sum()),), generator=generator)
    raise SystemExit("no ids route decisively: lower ROUTING_MARGIN or change the model")


def make(name, config, cls, block_path):
    torch.manual_seed(0)
    config._attn_implementation = "eager"  # attention weights are returned only by eager attention
    config._experts_implementation = "eager"  # a loop over the experts: grouped_mm has no float64
    model = cls(config).eval()
    # transformers initialises biases to zero and norm weights to one: give every 1-D
    # parameter random values, so that a bias or norm scale that posgeom dropped would show.
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith("sinks"):  # gpt-oss: wide, so that some heads sink most of their weight
                p.copy_(2.0 * torch.randn_like(p))
            elif p.dim() == 1 or pname.endswith(("q_norm.weight", "k_norm.weight")):  # Cohere's per-head norms are 2-D
                p.copy_((1.0 if pname.endswith("weight") else 0.0) + 0.1 * torch.randn_like(p))
        for bname, b in model.named_buffers():
            if bname.endswith("e_score_correction_bias"):  # DeepSeek-V3's: enough to change some choices, not all
                b.copy_(0.02 * torch.randn_like(b))
    out_dir = ROOT / name
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    vocab_size = config.get_text_config().vocab_size  # a multimodal config keeps it under text_config
    ids = torch.randint(0, vocab_size, IDS_SHAPE, generator=torch.Generator().manual_seed(1))
    if name == "hf-roberta":
        ids[1, 5] = config.pad_token_id  # a padding token mid-sequence: RoBERTa's positions skip it
    reference = model.to(torch.float64)
    blocks = blocks_of(reference, block_path)
    if getattr(config, "is_encoder_decoder", False):
        reference = reference.get_encoder()  # posgeom reads the encoder of a full checkpoint
    ids = decisive_ids(reference, ids, vocab_size)
    last_block = {}
    blocks[-1].register_forward_hook(lambda m, i, o: last_block.__setitem__("out", o[0] if isinstance(o, tuple) else o))
    with torch.no_grad():
        out = reference(input_ids=ids, output_hidden_states=True, output_attentions=True)
    hidden = list(out.hidden_states)
    tensors = {"input_ids": ids.to(torch.int64)}
    for layer, h in enumerate(hidden[:-1]):
        tensors[f"hidden.{layer}"] = h.contiguous()
    tensors[f"hidden.{len(hidden) - 1}"] = last_block["out"].contiguous()  # before the final norm
    if getattr(out, "logits", None) is not None or name in FINAL_NORM_WITHOUT_HEAD:
        tensors["final_norm"] = hidden[-1].contiguous()  # the base model's last state: normed
    if getattr(out, "logits", None) is not None:
        tensors["logits"] = out.logits.contiguous()
    bias = getattr(blocks[0].layer[0].SelfAttention, "relative_attention_bias", None) if hasattr(blocks[0], "layer") else None
    if bias is not None:  # T5's buckets as transformers computes them, for every (query, key)
        attn = blocks[0].layer[0].SelfAttention
        t_len = IDS_SHAPE[1]
        relative = torch.arange(t_len)[None, :] - torch.arange(t_len)[:, None]
        tensors["relative_position_bucket"] = attn._relative_position_bucket(
            relative, bidirectional=True, num_buckets=attn.relative_attention_num_buckets,
            max_distance=attn.relative_attention_max_distance).to(torch.int64).contiguous()
    for block, a in enumerate(out.attentions):
        tensors[f"attention.{block}"] = a.contiguous()
    # One token everywhere: every window alike, so the positional kernel is the attention.
    constant = torch.full((1, IDS_SHAPE[1]), CONSTANT_TOKEN, dtype=torch.int64)
    with torch.no_grad():
        const_out = reference(input_ids=constant, output_attentions=True)
    tensors["constant_ids"] = constant
    for block, a in enumerate(const_out.attentions):
        tensors[f"constant_attention.{block}"] = a.contiguous()
    save_file(tensors, str(out_dir / "golden.safetensors"),
              metadata={"transformers": transformers.__version__, "torch": torch.__version__,
                        "class": cls.__name__, "computed_in": "float64"})
    print(f"{name}: {cls.__name__}, {len(hidden)} hidden states, {len(out.attentions)} attention maps")


def real(name, model_dir):
    """A real checkpoint's float64 hidden states on fixed ids (tests/fixtures/real/): the
    weights themselves are fetched by tools/real-models, not committed."""
    model = transformers.AutoModel.from_pretrained(model_dir).eval().to(torch.float64)
    ids = torch.randint(0, model.config.vocab_size, (1, 48), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        out = model(input_ids=ids, output_hidden_states=True)
    tensors = {"input_ids": ids.to(torch.int64)}
    for layer, h in enumerate(out.hidden_states):  # an encoder: no final norm to take off
        tensors[f"hidden.{layer}"] = h.contiguous()
    path = ROOT.parent / "real" / f"{name}.golden.safetensors"
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata={"transformers": transformers.__version__, "torch": torch.__version__,
                                            "class": type(model).__name__, "computed_in": "float64"})
    print(f"{name}: {type(model).__name__}, {len(out.hidden_states)} hidden states -> {path}")


def main(args):
    if args[:1] == ["--real"]:
        real(args[1], args[2])
        return
    wanted = families()
    for name in args or wanted:
        make(name, *wanted[name])
    (ROOT / "VERSIONS").write_text(f"transformers {transformers.__version__}\ntorch {torch.__version__}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
