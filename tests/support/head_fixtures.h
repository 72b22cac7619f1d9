#pragma once
// Heads and sampled sequences the heads tests build their cases from.
#include <Eigen/Dense>
#include <memory>
#include <vector>

#include "posgeom/heads/sampled_attention.h"

namespace posgeom::testing {

// A head with random query and key maps [dh, d] and a random query bias.
heads::HeadMaps randomHead(int dh, int d);

// Sequences [T, d] stacked into the [S * T, d] rows sampleAttention takes.
Eigen::MatrixXd stackSequences(const std::vector<Eigen::MatrixXd>& sequences);

// One head's projections of `means` and of the samples' cvec (samples - means), with its joint
// norms' scales where it has them, as a block's analysis hands them over.
struct ProjectedHead {
  Eigen::MatrixXd q_means, k_means, q_cvec, k_cvec;
  heads::JointScales joint;
  bool has_joint = false;
  heads::HeadProjections projections() const { return {q_means, k_means, q_cvec, k_cvec, has_joint ? &joint : nullptr}; }
};
ProjectedHead projectHead(const heads::HeadMaps& head, const Eigen::MatrixXd& means, const Eigen::MatrixXd& samples);

// OLMo-2's norms over two heads, `head` the first (4 wide): their maps stacked.
std::shared_ptr<const heads::JointQkNorm> jointOver(const heads::HeadMaps& head, const heads::HeadMaps& other);

}  // namespace posgeom::testing
