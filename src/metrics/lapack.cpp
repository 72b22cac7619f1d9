#include "posgeom/metrics/lapack.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
// Fortran LAPACK, with the hidden lengths of the character arguments at the end (gfortran).
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t jobz_len, std::size_t uplo_len);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u, const int* ldu,
             double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info, std::size_t jobz_len);
}

namespace posgeom::metrics::lapack {
namespace {

void check(int info, const char* routine) {
  if (info != 0) throw std::runtime_error(std::string(routine) + " failed (info " + std::to_string(info) + ")");
}

int asInt(Eigen::Index n) { return static_cast<int>(n); }

// dgesdd with jobz 'N' (values) or 'S' (thin vectors); `vt` receives V^T [k, cols].
Eigen::VectorXd gesdd(Eigen::MatrixXd a, char jobz, Eigen::MatrixXd* vt) {
  const int m = asInt(a.rows()), n = asInt(a.cols()), k = std::min(m, n);
  Eigen::VectorXd s(k);
  Eigen::MatrixXd u;
  if (jobz == 'S') {
    u.resize(m, k);
    vt->resize(k, n);
  }
  const int ldu = std::max(1, m), ldvt = std::max(1, jobz == 'S' ? k : 1);
  double* u_data = jobz == 'S' ? u.data() : nullptr;
  double* vt_data = jobz == 'S' ? vt->data() : nullptr;
  double dummy = 0;
  std::vector<int> iwork(static_cast<std::size_t>(8 * k));
  int info = 0, query = -1;
  double size = 0;
  dgesdd_(&jobz, &m, &n, a.data(), &m, s.data(), u_data ? u_data : &dummy, &ldu, vt_data ? vt_data : &dummy, &ldvt, &size,
          &query, iwork.data(), &info, 1);
  check(info, "dgesdd");
  const int lwork = static_cast<int>(size);
  std::vector<double> work(static_cast<std::size_t>(std::max(1, lwork)));
  dgesdd_(&jobz, &m, &n, a.data(), &m, s.data(), u_data ? u_data : &dummy, &ldu, vt_data ? vt_data : &dummy, &ldvt,
          work.data(), &lwork, iwork.data(), &info, 1);
  check(info, "dgesdd");
  return s;
}

}  // namespace

Eigen::VectorXd symmetricEigenvalues(const Eigen::MatrixXd& symmetric) {
  if (symmetric.size() == 0) return {};
  Eigen::MatrixXd a = symmetric;
  const int n = asInt(a.rows());
  Eigen::VectorXd w(n);
  const char jobz = 'N', uplo = 'L';
  int info = 0, query = -1, iquery = -1, isize = 0;
  double size = 0;
  dsyevd_(&jobz, &uplo, &n, a.data(), &n, w.data(), &size, &query, &isize, &iquery, &info, 1, 1);
  check(info, "dsyevd");
  const int lwork = static_cast<int>(size), liwork = std::max(1, isize);
  std::vector<double> work(static_cast<std::size_t>(std::max(1, lwork)));
  std::vector<int> iwork(static_cast<std::size_t>(liwork));
  dsyevd_(&jobz, &uplo, &n, a.data(), &n, w.data(), work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
  check(info, "dsyevd");
  return w.reverse();
}

double largestEigenvalue(const Eigen::MatrixXd& a, double relative) {
  const Eigen::Index n = a.rows();
  if (n == 0) return 0;
  const Eigen::Index steps = std::min<Eigen::Index>(n, 200);
  Eigen::MatrixXd basis(n, steps);
  Eigen::VectorXd alpha(steps), beta(steps);
  std::mt19937_64 rng(12345);
  std::normal_distribution<double> normal;
  Eigen::VectorXd v(n);
  for (auto& x : v) x = normal(rng);
  v.normalize();
  const double scale = std::max(a.diagonal().cwiseAbs().maxCoeff(), 1e-300);
  for (Eigen::Index j = 0; j < steps; ++j) {
    basis.col(j) = v;
    Eigen::VectorXd w = a.selfadjointView<Eigen::Lower>() * v;
    alpha[j] = v.dot(w);
    // Full reorthogonalisation, twice: the basis stays orthonormal to rounding.
    for (int pass = 0; pass < 2; ++pass) w -= basis.leftCols(j + 1) * (basis.leftCols(j + 1).transpose() * w);
    beta[j] = w.norm();
    // The tridiagonal T_j's top Ritz pair, and its residual |A y - theta y| = beta_j |e_j^T s|.
    Eigen::MatrixXd t = Eigen::MatrixXd::Zero(j + 1, j + 1);
    for (Eigen::Index i = 0; i <= j; ++i) {
      t(i, i) = alpha[i];
      if (i > 0) t(i, i - 1) = t(i - 1, i) = beta[i - 1];
    }
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> ritz(t);
    const double theta = ritz.eigenvalues()[j];
    const double residual = beta[j] * std::abs(ritz.eigenvectors()(j, j));
    if (theta > 0 && residual <= relative * theta) return theta;
    if (beta[j] <= 1e-14 * scale) break;  // an invariant subspace that did not bound the error: be exact
    v = w / beta[j];
  }
  return symmetricEigenvalues(a)[0];
}

namespace {
// OpenBLAS's thread control, looked up at run time: absent with another LAPACK.
using SetThreads = void (*)(int);
using GetThreads = int (*)();
SetThreads setThreads() { return reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")); }
GetThreads getThreads() { return reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads")); }
}  // namespace

LimitedThreads::LimitedThreads(int threads) {
  if (const auto get = getThreads()) previous_ = get();
  if (const auto set = setThreads(); set && previous_ > threads) set(std::max(1, threads));
}

LimitedThreads::~LimitedThreads() {
  if (const auto set = setThreads(); set && previous_ > 0) set(previous_);
}

Eigen::VectorXd singularValues(const Eigen::MatrixXd& m) {
  if (m.size() == 0) return {};
  return gesdd(m, 'N', nullptr);
}

ThinSvd thinSvd(const Eigen::MatrixXd& m) {
  ThinSvd out;
  if (m.size() == 0) return out;
  Eigen::MatrixXd vt;
  out.values = gesdd(m, 'S', &vt);
  out.right = vt.transpose();
  for (Eigen::Index c = 0; c < out.right.cols(); ++c) {
    Eigen::Index top = 0;
    out.right.col(c).cwiseAbs().maxCoeff(&top);
    if (out.right(top, c) < 0) out.right.col(c) *= -1;
  }
  return out;
}

}  // namespace posgeom::metrics::lapack
