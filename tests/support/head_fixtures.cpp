#include "head_fixtures.h"

namespace posgeom::testing {

heads::HeadMaps randomHead(int dh, int d) {
  return {Eigen::MatrixXd::Random(dh, d), Eigen::VectorXd::Random(dh), Eigen::MatrixXd::Random(dh, d), {}};
}

Eigen::MatrixXd stackSequences(const std::vector<Eigen::MatrixXd>& sequences) {
  const Eigen::Index t = sequences.at(0).rows();
  Eigen::MatrixXd out(static_cast<Eigen::Index>(sequences.size()) * t, sequences[0].cols());
  for (std::size_t c = 0; c < sequences.size(); ++c) out.middleRows(static_cast<Eigen::Index>(c) * t, t) = sequences[c];
  return out;
}

ProjectedHead projectHead(const heads::HeadMaps& head, const Eigen::MatrixXd& means, const Eigen::MatrixXd& samples) {
  const Eigen::Index t = means.rows();
  Eigen::MatrixXd cvec = samples;
  for (Eigen::Index c = 0; c < samples.rows() / t; ++c) cvec.middleRows(c * t, t) -= means;
  ProjectedHead p{means * head.wq.transpose(), means * head.wk.transpose(), cvec * head.wq.transpose(),
                  cvec * head.wk.transpose(), {}, head.joint != nullptr};
  if (p.has_joint) {
    p.joint = heads::jointScalesOfMeans(*head.joint, head.norm_eps, means, samples.rows());
    heads::jointScalesOfSamples(*head.joint, head.norm_eps, samples, 0, p.joint);
  }
  return p;
}

std::shared_ptr<const heads::JointQkNorm> jointOver(const heads::HeadMaps& head, const heads::HeadMaps& other) {
  heads::JointQkNorm j;
  j.wq.resize(8, head.wq.cols()), j.wk.resize(8, head.wk.cols());
  j.wq << head.wq, other.wq;
  j.wk << head.wk, other.wk;
  j.bq.resize(8), j.bk.resize(8);
  j.bq << head.bq, other.bq;
  j.bk << (head.bk.size() > 0 ? head.bk : Eigen::VectorXd::Zero(4)), Eigen::VectorXd::Random(4);
  return std::make_shared<const heads::JointQkNorm>(j);
}

}  // namespace posgeom::testing
