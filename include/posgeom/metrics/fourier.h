#pragma once
// Smoothness of the positional basis: its Gram matrix seen through the DCT.
#include <Eigen/Dense>

namespace posgeom::metrics {

// The orthonormal DCT-II matrix D [n, n]: (D x)_k = s_k sum_t x_t cos(pi (t + 1/2) k / n).
Eigen::MatrixXd dctMatrix(Eigen::Index n);
// Rows scaled to unit norm, then P P^T [T, T] (cosine similarities of positions).
Eigen::MatrixXd normalizedGram(const Eigen::MatrixXd& p);
// Orthonormal 2-D DCT-II: D G D^T.
Eigen::MatrixXd dct2(const Eigen::MatrixXd& g);
// Share of squared coefficients in the top-left k x k block.
double lowFrequencyEnergy(const Eigen::MatrixXd& coefficients, Eigen::Index k);
// Power of P along positions per DCT frequency, summed over dimensions [T].
Eigen::VectorXd positionalPowerSpectrum(const Eigen::MatrixXd& p);

}  // namespace posgeom::metrics
