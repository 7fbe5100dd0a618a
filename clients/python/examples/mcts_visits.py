# %% [markdown]
# # MCTS on a Connect Four position, followed live
#
# A notebook as a Python file: each `# %%` starts a cell (Jupyter with jupytext, VS Code and
# PyCharm run them one by one; `python mcts_visits.py` runs them all). It needs a coordinator
# with at least one worker, e.g. `gamesolver serve --listen 127.0.0.1:8080 --local-workers 2`,
# and reads its address from `GAMESOLVER_URL` (default `http://127.0.0.1:8080`) and the API
# token from `GAMESOLVER_API_TOKEN`.

# %%
import os

from gamesolver_client import Client

client = Client()
position = os.environ.get("EXAMPLE_POSITION", "4453")
playouts = int(os.environ.get("EXAMPLE_PLAYOUTS", "400000"))
client.board("connect4", position)  # the board, as a picture in Jupyter

# %% [markdown]
# Submit an MCTS job: `trees` root-parallel trees split into `tasks` tasks (workers run them side
# by side), `analyse=all` for every root move's visits and mean value. A fixed seed gives the same
# visits on any number of workers.

# %%
job = client.submit(
    "connect4",
    position,
    algorithm="mcts",
    options={"playouts": playouts, "trees": 4, "tasks": 4, "seed": 1, "analyse": "all"},
)
final = job.follow()  # a progress bar: runs done, the best score
result = final.result
assert result is not None, final.error
print(f"best move {result.best_move}, value {result.value}, {result.nodes} playouts")

# %% [markdown]
# Every root move's visits and mean value, as a table (pandas) and as a bar chart (matplotlib,
# when it is installed). In Jupyter, `job.plot()` shows the coordinator's own chart of the job.

# %%
analysis = job.analysis()
try:
    frame = analysis.to_dataframe()[["move", "visits", "value"]]
    print(frame.to_string(index=False))
except ImportError:
    for m in analysis.moves:
        print(m.move, m)

# %%
try:
    import matplotlib

    matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
if plt is not None:
    moves = sorted(analysis.moves, key=lambda m: m.move)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.bar([m.move for m in moves], [m.visits or 0 for m in moves])
    ax.set_xlabel("column")
    ax.set_ylabel("visits")
    ax.set_title(f"MCTS visits after {result.nodes} playouts, position {position}")
    fig.savefig(os.environ.get("EXAMPLE_OUT", "mcts_visits.png"), bbox_inches="tight")
else:
    # Without matplotlib: the coordinator's chart of the job (root visits over time).
    path = job.plot().save(os.environ.get("EXAMPLE_OUT", "mcts_visits.svg"))
    print(f"chart written to {path}")
