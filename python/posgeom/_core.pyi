from collections.abc import Sequence
import os


def built_with_torch() -> str:
    """
    The torch version the extension was built against (torch.__version__ must equal it).
    """

def set_log_level(level: str) -> None:
    """
    posgeom's own log lines, on standard error: 'warning' (the default), 'info' (the CLI's progress), 'debug', 'off'.
    """

class State:
    """
    The statistics of an analysis: what state.safetensors holds, and what `posgeom merge` reads.
    """

    @property
    def windows(self) -> int:
        """windows accumulated"""

    @property
    def layers(self) -> list[int]:
        """the hidden-state indices it holds, ascending"""

    @property
    def settings(self) -> dict:
        """the run's identity and settings (a merge compares them)"""

    def statistics(self, layer: int) -> dict:
        """
        A layer's statistics: sequences, position_sum [T', d], second_moment and context_second_moment [d, d], norm_sum, previous_cosine_sum, and the kept context_means and reservoir (numpy float64).
        """

    def save(self, path: str | os.PathLike, *, overwrite: bool = False) -> None:
        """
        Writes state.safetensors (what `posgeom merge` reads). An existing file is replaced only with overwrite=True, and only when it is a posgeom state.
        """

    def __repr__(self) -> str: ...

def load(path: str | os.PathLike) -> State:
    """
    Reads a state.safetensors written by `posgeom analyze`, `merge` or State.save.
    """

def merge(states: Sequence[State], *, partial: bool = False) -> State:
    """
    One state from the states of a run's shards (`posgeom merge`): each shard once, the same settings, model and corpus.
    """

class Accumulator:
    """
    Reduces batches of hidden states to a state's statistics (float64 sums, on the tensors' device) and drops each batch: the accumulator of `posgeom analyze`, fed from Python.
    """

    def __init__(self, num_positions: int, dim: int, layers: int | Sequence[int] = 1, *, skip_first: int = 1, second_moment: bool = True, device: str | None = None, shard: str | None = None, attention_inputs: bool = False) -> None:
        """
        num_positions: tokens per window (T); dim: the hidden width (d); layers: how many hidden states add() takes (all accumulated), or a list of the hidden-state indices to accumulate. skip_first: positions dropped from every statistic (the first attends only to itself). device: where the sums are (default: the first batch's device). shard: 'i/n' when this accumulator holds one of n disjoint parts of the windows, so that the states merge. attention_inputs: keep each block's attention inputs too (add(..., attention_inputs=...)), for posgeom.heads.
        """

    def add(self, hidden: object, *, batch: WindowBatch | None = None, labels: Sequence[str] | None = None, windows: Sequence[int] | None = None, attention_inputs: object | None = None) -> None:
        """
        Adds one batch. hidden: a sequence of [batch, T, d] by hidden-state index (output_hidden_states), an [L, batch, T, d] array, or one [batch, T, d]; torch tensors (CPU or CUDA) or numpy arrays, read where they are without a copy. batch: the posgeom.WindowBatch the hidden states are of (its window indices, document labels and ids). labels, windows: each window's document and index, without a batch (default: no label, consecutive indices). attention_inputs: with attention_inputs=True, block b's attention input after its norm, [batch, T, d] by block.
        """

    def merge(self, other: Accumulator | State) -> None:
        """
        Adds another accumulator's (or state's) statistics: its windows must be another shard of the same run.
        """

    def state(self) -> State:
        """The statistics as a posgeom.State (copied to the host)."""

    def save(self, path: str | os.PathLike, *, overwrite: bool = False) -> None:
        """
        Writes the state as state.safetensors, which `posgeom merge` reads with the CLI's shards.
        """

    @property
    def windows(self) -> int:
        """windows added"""

    def __repr__(self) -> str: ...

class Results:
    """
    Every number of a report: summary (summary.json's object) and each layer's matrices.
    """

    @property
    def summary(self) -> dict:
        """
        summary.json's object: the settings, per-layer numbers, cross-layer cosines and, with heads, every head
        """

    @property
    def layers(self) -> list[int]:
        """the hidden-state indices analysed"""

    def arrays(self, layer: int) -> dict:
        """
        A layer's matrices as numpy float64 arrays: positional (P, [T', d]), gram and gram_dct ([T', T']), power_spectrum, spiral, singular_pos / singular_cvec / singular_resid, combined_gram, reservoir_cvec.
        """

    def __repr__(self) -> str: ...

def metrics(state: State, *, screenot_k: int | None = None, lowfreq_k: int | None = None, screenot_strategy: str | None = None) -> Results:
    """
    The metrics of every layer of a state: the numbers of summary.json and the CSVs, as `posgeom merge` computes them.
    """

def report(results: State | Results, out: str | os.PathLike, *, force: bool = False) -> None:
    """
    Writes summary.json, the CSV tables and report.html into out (and a State's state.safetensors), as analyze does: out must be absent or empty, or hold a report alone with force=True.
    """

class WindowBatch:
    """
    One batch of windows, as analyze's pass would run it through the model.
    """

    @property
    def ids(self) -> object:
        """
        token ids [batch, T] (int64, numpy), the framing (BOS, [CLS] ... [SEP]) included
        """

    @property
    def indices(self) -> object:
        """each window's index in the run"""

    @property
    def labels(self) -> list[str]:
        """each window's document"""

    def __len__(self) -> int: ...

    def __repr__(self) -> str: ...

class Windows:
    """
    The windows `posgeom analyze` reads for the same options (model, corpus, seq_len, num_seqs, sampling, seed, shard, batch_size, ...), in batches: iterate it, run each batch's ids through the model, and add the hidden states to windows.accumulator(). It is read once, as analyze reads its corpus.
    """

    def __init__(self, **options: object) -> None:
        """
        Keyword arguments are analyze's options, '-' written '_' (model=, corpus=, seq_len=, ...).
        """

    def __iter__(self) -> object: ...

    def __next__(self) -> WindowBatch: ...

    def __repr__(self) -> str: ...

    @property
    def settings(self) -> dict:
        """what analyze's state records for these options"""

    @property
    def num_positions(self) -> int:
        """tokens per window (T)"""

    @property
    def dim(self) -> int:
        """the model's hidden width (d)"""

    @property
    def layers(self) -> list[int]:
        """the hidden-state indices analyze accumulates"""

    @property
    def model_dir(self) -> str:
        """the model's directory (a hub name resolved into the cache)"""

    def accumulator(self, *, device: str | None = None) -> Accumulator:
        """
        An Accumulator with analyze's settings for these windows: its state merges with analyze's shards.
        """

def analyze(**options: object) -> Results:
    """
    Runs `posgeom analyze` with these options (its names, '-' written '_': model=, corpus=, layer=, seq_len=, num_seqs=, heads=, device=, dtype=, shard=, ...) and returns its posgeom.Results. With out=, the report directory is written there as the CLI writes it (force=True replaces an old report); without, nothing is kept. One process, unless dist_init='env' (or a tcp:// address) makes it a rank of a distributed run. Ctrl-C stops the pass at its next batch (KeyboardInterrupt; with out=, resume with resume=out).
    """

def heads(state: State, block: int, q_weight: object, k_weight: object, *, q_bias: object | None = None, k_bias: object | None = None, causal: bool = True, scale: float | None = None, rope_theta: float | None = None, rotary_dims: int | None = None, rope_interleaved: bool = False, alibi_slopes: Sequence[float] | None = None, kernel_skip: int = 5, query: str = 'sampled') -> list[dict]:
    """
    The positional kernel, ETC, window, class, QK decomposition and sparsity of every head of one block (0-based: it reads hidden state `block`), as `analyze --heads` reports them: from the attention inputs the state accumulated for that block, and the block's query and key maps, [heads, head_dim, d] each (k_weight may have fewer heads: grouped queries), with their biases [heads, head_dim]. scale: the logits' (default 1/sqrt(head_dim)); rope_theta and rotary_dims: plain RoPE on the first rotary_dims of each head (rotate-half pairs, or interleaved); alibi_slopes: one per head. Returns summary.json's row of each head, with its ETC curve, its kernel's last row (profile) and a thumbnail of its kernel as numpy arrays.
    """
