#pragma once
// The names of a report's outputs, written once: summary.json's keys and the CSV tables'
// columns. The writer (tables.cpp) and every reader (run_summary.h, check, batch's tables)
// spell them from here. Torch-free, Eigen-free.
#include <array>

namespace posgeom::report::keys {

inline constexpr const char* kSummaryFile = "summary.json";

// Top level: the run's settings (written by the job), then the report's own sections.
inline constexpr const char* kModel = "model";
inline constexpr const char* kSource = "source";
inline constexpr const char* kCorpus = "corpus";  // also probe's: "repeated-random"
inline constexpr const char* kSkipFirst = "skip_first";
inline constexpr const char* kData = "data";
inline constexpr const char* kHeadOptions = "head_options";
inline constexpr const char* kRepeatPeriod = "repeat_period";  // in head_options, and in probe
inline constexpr const char* kModelFingerprint = "model_fingerprint";
inline constexpr const char* kModelCommit = "model_commit";
inline constexpr const char* kCorpusFingerprint = "corpus_fingerprint";
inline constexpr const char* kLayers = "layers";
inline constexpr const char* kCrossLayer = "cross_layer";
// "layer_cosine_matrix" (--layer-cosines, the paper's Appendix B.2): kLayers and kCosine, the
// mean token-by-token cosine between every pair of them ([L][L]); also layer_cosines.csv. (The
// setting itself is "layer_cosines".)
inline constexpr const char* kLayerCosines = "layer_cosine_matrix";
inline constexpr const char* kCosine = "cosine";
inline constexpr const char* kLayerCosinesCsv = "layer_cosines.csv";
inline constexpr const char* kContextSimilarity = "context_similarity";
inline constexpr const char* kHeads = "heads";
inline constexpr const char* kProbe = "probe";
inline constexpr const char* kNeurons = "neurons";
inline constexpr const char* kSweep = "sweep";  // added by batch: the sweep run that made the report

// "sweep": the run of batch's sweep that made the report, besides kModel and kCorpus.
inline constexpr const char* kVariant = "variant";
inline constexpr const char* kCheckpoint = "checkpoint";
inline constexpr const char* kOptions = "options";

// The identity table of report.html shows these settings, in this order, where present.
inline constexpr std::array<const char*, 16> kIdentity{
    kModel, "model_type", kSource, "activations", kCorpus, "tokenizer", "seq_len", kSkipFirst, "layer_selection",
    "dtype", "device", "sampling", "seed", "causal", "shard", "version"};

// A row of "layers".
inline constexpr const char* kLayer = "layer";
inline constexpr const char* kSequences = "sequences";
inline constexpr const char* kPositions = "positions";
inline constexpr const char* kScreenotRank = "screenot_rank";
inline constexpr const char* kScreenotThreshold = "screenot_threshold";
inline constexpr const char* kStableRank = "stable_rank";
inline constexpr const char* kExplainedRatio = "explained_ratio";
inline constexpr const char* kRelativeNorm = "relative_norm";
inline constexpr const char* kGlobalMeanNorm = "global_mean_norm";
inline constexpr const char* kPosFroNorm = "pos_fro_norm";
inline constexpr const char* kLowfreqEnergy = "lowfreq_energy";
inline constexpr const char* kIncoherenceMax = "incoherence_max";
inline constexpr const char* kIncoherenceMean = "incoherence_mean";
inline constexpr const char* kMeanHiddenNorm = "mean_hidden_norm";
inline constexpr const char* kPreviousLayerCosine = "previous_layer_cosine";
inline constexpr const char* kTopSingularValuesPos = "top_singular_values_pos";
inline constexpr const char* kContextCosWithinLabel = "context_cos_within_label";
inline constexpr const char* kContextCosBetweenLabel = "context_cos_between_label";
inline constexpr const char* kContextLabels = "context_labels";

// "context_similarity": mean and spread over layers of the label cosines (the paper's Table 1).
inline constexpr const char* kBetweenMean = "b_mean";
inline constexpr const char* kBetweenStd = "b_std";
inline constexpr const char* kWithinMean = "w_mean";
inline constexpr const char* kWithinStd = "w_std";
inline constexpr std::array<const char*, 4> kContextSimilarityValues{kBetweenMean, kBetweenStd, kWithinMean, kWithinStd};
// (and kLayers: how many layers had labels)

// A row of "cross_layer".
inline constexpr const char* kFrom = "from";
inline constexpr const char* kTo = "to";
inline constexpr const char* kBasisCosine = "basis_cosine";
inline constexpr const char* kPrincipalAngleCosines = "principal_angle_cosines";

// A row of "heads".
inline constexpr const char* kBlock = "block";
inline constexpr const char* kHead = "head";
inline constexpr const char* kEtc = "etc";
inline constexpr const char* kKeys = "keys";
inline constexpr const char* kClass = "class";  // heads::headKindName
inline constexpr const char* kWindow90 = "window90";
inline constexpr const char* kEtcMeanQuery = "etc_mean_query";
inline constexpr const char* kDenominatorCv = "denominator_cv";
inline constexpr const char* kContextual = "contextual";
inline constexpr const char* kQkSharePosPos = "qk_share_pos_pos";
inline constexpr const char* kQkSharePosCvec = "qk_share_pos_cvec";
inline constexpr const char* kQkShareCvecPos = "qk_share_cvec_pos";
inline constexpr const char* kQkShareCvecCvec = "qk_share_cvec_cvec";
inline constexpr const char* kQkEnergyPos = "qk_energy_pos";
inline constexpr const char* kQkRank = "qk_rank";
inline constexpr const char* kAttentionKeys90 = "attention_keys90";
inline constexpr const char* kAttentionEntropy = "attention_entropy";
inline constexpr const char* kKernelTv = "kernel_tv";
inline constexpr const char* kEquivarianceTv = "equivariance_tv";
inline constexpr const char* kKernelQuerySpread = "kernel_query_spread";
inline constexpr const char* kQkDiagonalShare = "qk_diagonal_share";
inline constexpr const char* kQkBlockShare = "qk_block_share";
inline constexpr const char* kInductionScore = "induction_score";
inline constexpr const char* kPreviousTokenScore = "previous_token_score";
inline constexpr const char* kSinkShare = "sink_share";
inline constexpr const char* kFirstKeysShare = "first_keys_share";
inline constexpr const char* kSelfShare = "self_share";
inline constexpr const char* kLearnedSinkShare = "learned_sink_share";
inline constexpr const char* kKernelLearnedSinkShare = "kernel_learned_sink_share";
// "sink_heads": kNamedAbove, and kBlocks: each block's (kBlock) heads (kHeads) whose sink_share is above it.
inline constexpr const char* kSinkHeads = "sink_heads";
inline constexpr const char* kBlocks = "blocks";
inline constexpr const char* kSamples = "samples";

// A head's "rope_bands" (report/rope_band_tables.h) and the summary's "rope_band_layout".
inline constexpr const char* kRopeBands = "rope_bands";
inline constexpr const char* kKernelShare = "kernel_share";
inline constexpr const char* kAttentionShare = "attention_share";
inline constexpr const char* kQPairNorm = "q_pair_norm";
inline constexpr const char* kKPairNorm = "k_pair_norm";
inline constexpr const char* kQUnturnedNorm = "q_unturned_norm";
inline constexpr const char* kKUnturnedNorm = "k_unturned_norm";
inline constexpr const char* kEtcHighestBand = "etc_highest_band";
inline constexpr const char* kEtcLowestBand = "etc_lowest_band";
inline constexpr const char* kKernelMass = "kernel_mass";
inline constexpr const char* kAttentionMass = "attention_mass";
inline constexpr const char* kRopeBandLayout = "rope_band_layout";
inline constexpr const char* kBands = "bands";
inline constexpr const char* kBand = "band";
inline constexpr const char* kFirstPair = "first_pair";
inline constexpr const char* kPairs = "pairs";
inline constexpr const char* kDims = "dims";
inline constexpr const char* kShortestWavelength = "shortest_wavelength";
inline constexpr const char* kLongestWavelength = "longest_wavelength";
// rope_bands.csv: a row per block, head and band.
inline constexpr const char* kRopeBandsCsv = "rope_bands.csv";
inline constexpr std::array<const char*, 10> kRopeBandsCsvColumns{
    kBlock, kHead, kBand, kFirstPair, kPairs, kDims, kShortestWavelength, kLongestWavelength, kKernelShare, kAttentionShare};

// "probe" (--corpus repeated-random), besides kCorpus and kRepeatPeriod.
inline constexpr const char* kNamedAbove = "named_above";
inline constexpr const char* kInductionHeads = "induction_heads";
inline constexpr const char* kPreviousTokenHeads = "previous_token_heads";
inline constexpr const char* kScore = "score";  // a named head's, beside kHead

// "neurons" (--neurons): block 0's contextual heads, their groups and the top neurons.
inline constexpr const char* kContextualHeads = "contextual_heads";
inline constexpr const char* kGroups = "groups";  // each: kHeads, kMinSimilarity
inline constexpr const char* kMinSimilarity = "min_similarity";
inline constexpr const char* kInverseNormScale = "inverse_norm_scale";
inline constexpr const char* kWindows = "windows";
inline constexpr const char* kMeanCorrelationTop = "mean_correlation_top";
inline constexpr const char* kMeanWindowCorrelationTop = "mean_window_correlation_top";
inline constexpr const char* kTop = "top";  // rows: kNeuron, kScore, kCorrelation, kWindowCorrelation, kTopPositive, kTopNegative
inline constexpr const char* kNeuron = "neuron";
inline constexpr const char* kCorrelation = "correlation";
inline constexpr const char* kWindowCorrelation = "window_correlation";
inline constexpr const char* kTopPositive = "top_positive";  // tokens: kToken, kId, kContribution
inline constexpr const char* kTopNegative = "top_negative";
inline constexpr const char* kToken = "token";
inline constexpr const char* kId = "id";
inline constexpr const char* kContribution = "contribution";

// A layer's "massive_activations" (issue 36): kMedianAbs, kMedianRelativeError, kNamedAbove
// (the multiple of the median), kMassiveDimensions (how many), kTop (the largest dimensions:
// kDim, kMaxAbs, kTimesMedian, kMassive, kWindow, kPosition, kTokenId, kPositions, kPos0Share),
// kPosition0 (kPosNorm, kMassiveShare) and kVarianceShares (kWithPosition0 and
// kWithoutPosition0, each kPositionShare, kContextShare, kResidualShare).
inline constexpr const char* kMassiveActivations = "massive_activations";
inline constexpr const char* kMedianAbs = "median_abs";
inline constexpr const char* kMedianRelativeError = "median_relative_error";
inline constexpr const char* kMassiveDimensions = "massive_dimensions";
inline constexpr const char* kDim = "dim";
inline constexpr const char* kMaxAbs = "max_abs";
inline constexpr const char* kTimesMedian = "times_median";
inline constexpr const char* kMassive = "massive";
inline constexpr const char* kWindow = "window";
inline constexpr const char* kPosition = "position";
inline constexpr const char* kTokenId = "token_id";
inline constexpr const char* kPos0Share = "pos0_share";
inline constexpr const char* kPosition0 = "position_0";
inline constexpr const char* kPosNorm = "pos_norm";
inline constexpr const char* kMassiveShare = "massive_share";
inline constexpr const char* kVarianceShares = "variance_shares";
inline constexpr const char* kWithPosition0 = "with_position_0";
inline constexpr const char* kWithoutPosition0 = "without_position_0";
inline constexpr const char* kPositionShare = "position";
inline constexpr const char* kContextShare = "context";
inline constexpr const char* kResidualShare = "residual";
// massive_activations.csv: a row per layer and top dimension, with the layer's median, the
// share of |pos_0| in its massive dimensions and its positional variance share with
// position 0 in and out.
inline constexpr const char* kMassiveCsv = "massive_activations.csv";
inline constexpr const char* kPos0MassiveShare = "pos0_massive_share";
inline constexpr const char* kPositionShareWith0 = "position_share_with_position_0";
inline constexpr const char* kPositionShareWithout0 = "position_share_without_position_0";
inline constexpr std::array<const char*, 14> kMassiveCsvColumns{
    kLayer,    kDim,       kMaxAbs,    kTimesMedian,      kMassive,            kMedianAbs,            kWindow,
    kPosition, kTokenId,   kPositions, kPos0Share,        kPos0MassiveShare,   kPositionShareWith0,   kPositionShareWithout0};

// layers.csv's columns.
inline constexpr std::array<const char*, 12> kLayersCsvColumns{
    kLayer,         kScreenotRank,   kStableRank,      kExplainedRatio,  kRelativeNorm,  kGlobalMeanNorm,
    kPosFroNorm,    kLowfreqEnergy,  kIncoherenceMax,  kIncoherenceMean, kMeanHiddenNorm, kPreviousLayerCosine};

// The per-layer table of report.html.
inline constexpr std::array<const char*, 12> kLayerTableColumns{
    kLayer,           kScreenotRank,    kStableRank,      kExplainedRatio,        kRelativeNorm,           kLowfreqEnergy,
    kIncoherenceMax,  kIncoherenceMean, kContextCosWithinLabel, kContextCosBetweenLabel, kMeanHiddenNorm, kPreviousLayerCosine};

// heads.csv's columns: every key of a "heads" row, in the writer's order.
inline constexpr std::array<const char*, 30> kHeadsCsvColumns{
    kBlock,        kHead,          kEtc,           kKeys,          kClass,           kWindow90,      kEtcMeanQuery,
    kDenominatorCv, kContextual,   kQkSharePosPos, kQkSharePosCvec, kQkShareCvecPos, kQkShareCvecCvec, kQkEnergyPos,
    kQkRank,       kAttentionKeys90, kAttentionEntropy, kKernelTv,  kEquivarianceTv,  kKernelQuerySpread, kQkDiagonalShare,
    kQkBlockShare, kInductionScore, kPreviousTokenScore, kSinkShare, kFirstKeysShare, kSelfShare, kLearnedSinkShare,
    kKernelLearnedSinkShare, kSamples};

// The columns of batch's table.md that are not a layer's number: the context similarity,
// and each block's heads by class (table.csv's metrics heads_<class>).
inline constexpr const char* kHeadClassesColumn = "head_classes";
inline constexpr const char* kHeadClassMetricPrefix = "heads_";
inline constexpr const char* kContextMetricPrefix = "context_";

}  // namespace posgeom::report::keys
