// A Torch-free target's headers (the pass's plan and the jobs): compile without Torch.
#include "posgeom/jobs/analyze_job.h"
#include "posgeom/jobs/bench_job.h"
#include "posgeom/pass/analysis_pass.h"
#include "posgeom/pass/heads_stage.h"
#include "posgeom/pass/plan.h"
