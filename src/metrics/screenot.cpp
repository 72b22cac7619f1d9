#include "posgeom/metrics/screenot.h"

#include "posgeom/base/option_names.h"
#include "posgeom/metrics/lapack.h"

#include <algorithm>
#include <cmath>

#include "posgeom/base/error.h"

namespace posgeom::metrics {
namespace {

// The noise bulk with the top k values (the possible signal) replaced, ascending.
Eigen::VectorXd pseudoNoise(Eigen::VectorXd values, int k, ScreeNotStrategy strategy) {
  std::sort(values.data(), values.data() + values.size());
  const Eigen::Index p = values.size();
  checkScreeNotRank(k, strategy, p);
  if (k <= 0) return values;
  const Eigen::Index top = p - k;  // first replaced index
  switch (strategy) {
    case ScreeNotStrategy::kTransportToZero: values.tail(k).setZero(); break;
    case ScreeNotStrategy::kWinsorize: values.tail(k).setConstant(values[top - 1]); break;
    case ScreeNotStrategy::kImpute: {
      // Extrapolate the bulk's edge with the 2/3-power law of a Marchenko-Pastur edge.
      const double edge = values[top - 1];
      const double spread = edge - values[p - 2 * k - 1];
      for (int l = 1; l <= k; ++l) {
        const double a = (1.0 - std::pow(static_cast<double>(l - 1) / k, 2.0 / 3.0)) / (std::pow(2.0, 2.0 / 3.0) - 1.0);
        values[p - l] = edge + a * spread;
      }
      break;
    }
  }
  return values;
}

// Psi(y) = y D'(y) / D(y) for the D-transform of the counting measure of z, aspect gamma.
double psi(double y, const Eigen::VectorXd& z, double gamma) {
  const Eigen::ArrayXd z2 = z.array().square();
  const Eigen::ArrayXd denom = y * y - z2;
  const double phi = (y / denom).mean();
  const double phid = (-(y * y + z2) / denom.square()).mean();
  const double d = phi * (gamma * phi + (1 - gamma) / y);
  const double dd = phid * (gamma * phi + (1 - gamma) / y) + phi * (gamma * phid - (1 - gamma) / (y * y));
  return y * dd / d;
}

}  // namespace

void checkScreeNotRank(int k, ScreeNotStrategy strategy, Eigen::Index p) {
  if (k >= p) throw InputError(option::kScreenotK, std::to_string(k) + " is too large: it must be below min(rows, cols) = " + std::to_string(p));
  if (strategy == ScreeNotStrategy::kImpute && k > 0 && 2 * k + 1 >= p)
    throw InputError(option::kScreenotK, std::to_string(k) + " is too large for imputation: it needs 2k+1 < min(rows, cols) = " +
                                         std::to_string(p));
}

ScreeNotStrategy parseScreeNotStrategy(const std::string& name) {
  if (name == "0") return ScreeNotStrategy::kTransportToZero;
  if (name == "w") return ScreeNotStrategy::kWinsorize;
  if (name == "i") return ScreeNotStrategy::kImpute;
  throw InputError(option::kScreenotStrategy, "'" + name + "' (use 0, w or i)");
}

const char* screeNotStrategyName(ScreeNotStrategy strategy) {
  return strategy == ScreeNotStrategy::kTransportToZero ? "0" : strategy == ScreeNotStrategy::kWinsorize ? "w" : "i";
}

ScreeNotThreshold screeNot(const Eigen::VectorXd& singular_values, Eigen::Index rows, Eigen::Index cols, int k,
                           ScreeNotStrategy strategy) {
  const double gamma = std::min(static_cast<double>(rows) / cols, static_cast<double>(cols) / rows);
  const Eigen::VectorXd z = pseudoNoise(singular_values, k, strategy);
  // The optimal threshold is the root of Psi(y) = -4 above the noise; Psi increases there.
  double low = z.maxCoeff(), high = low + 2.0;
  while (psi(high, z, gamma) < -4) {
    low = high;
    high *= 2;
  }
  for (int i = 0; i < 200 && high - low > 1e-13 * std::max(1.0, high); ++i) {
    const double mid = 0.5 * (low + high);
    (psi(mid, z, gamma) < -4 ? low : high) = mid;
  }
  ScreeNotThreshold out;
  out.threshold = 0.5 * (low + high);
  out.rank = static_cast<int>((singular_values.array() > out.threshold).count());
  return out;
}

ScreeNotThreshold screeNot(const Eigen::MatrixXd& matrix, int k, ScreeNotStrategy strategy) {
  return screeNot(lapack::singularValues(matrix), matrix.rows(), matrix.cols(), k, strategy);
}

}  // namespace posgeom::metrics
