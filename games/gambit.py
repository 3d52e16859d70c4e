"""Gambit's game files: ``.nfg`` (normal form) and ``.efg`` (extensive form), read and written.

Formats (as documented by the Gambit project):

* ``.nfg``, **payoff version**::

      NFG 1 R "title" { "Player 1" "Player 2" } { 2 2 }
      "optional comment"
      1 1  0 2  0 2  1 1

  the strategy counts (or ``{ { "s1" "s2" } { "t1" "t2" } }`` with names)
  followed by every player's payoff at every pure profile, the first player's
  strategy changing fastest.

* ``.nfg``, **outcome version**: after the strategies and the comment, a
  ``{ ... }`` list of outcomes ``{ "name" u_1, u_2 }`` and then one outcome
  number per profile (same order; 0 is the null outcome, all zeros).

* ``.efg``: ``EFG 2 R "title" { players } "comment"`` and then the nodes in
  prefix order, one per line:

  - ``c "name" infoset "infoset name" { "action" prob ... } outcome`` (chance),
  - ``p "name" player infoset "infoset name" { "action" ... } outcome`` (a player),
  - ``t "name" outcome "outcome name" { u_1 u_2 ... }`` (terminal),

  where an outcome's name and payoffs follow its number the first time it
  appears, an information set's name and actions may be left out after its
  first node, and payoffs of outcomes met on the way to a terminal add up.

Numbers may be integers, decimals or rationals ``p/q``; they are parsed
exactly (:class:`fractions.Fraction`) and stored as float64. Nothing in a file
is executed: it is tokenised and parsed, and any error names its line.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from games.custom_sequential import CHANCE, TERMINAL, SequentialGame
from games.normal_form import NormalFormGame

__all__ = ["GambitTree", "read_gambit", "write_gambit"]

logger = logging.getLogger(__name__)

#: Largest file read, in bytes (a guard against feeding the parser something that is not a game file).
MAX_FILE_BYTES = 200_000_000

_FLOAT_MAX = Fraction(np.finfo(np.float64).max)
_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([{},])|([^\s{},"]+))', re.S)


class _Tokens:
    """The tokens of a Gambit file with their line numbers: strings, numbers, words and ``{`` ``}`` ``,``."""

    def __init__(self, text: str, path: str):
        self.path = path
        self.items = []   # (kind, value, line): kind in "str", "sym", "word"
        pos, line = 0, 1
        while True:
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                rest = text[pos:].lstrip()
                if rest:
                    line = text.count("\n", 0, len(text) - len(rest)) + 1
                    raise ValueError(f"{path}, line {line}: cannot read {rest[:20]!r} (an unclosed quote?).")
                break
            start = m.start(1) if m.group(1) is not None else m.start(2) if m.group(2) else m.start(3)
            line += text.count("\n", pos, start)
            if m.group(1) is not None:
                self.items.append(("str", m.group(1).replace('\\"', '"').replace("\\\\", "\\"), line))
            elif m.group(2):
                self.items.append(("sym", m.group(2), line))
            else:
                self.items.append(("word", m.group(3), line))
            line += text.count("\n", start, m.end())
            pos = m.end()
        self.pos = 0

    def line(self) -> int:
        return self.items[min(self.pos, len(self.items) - 1)][2] if self.items else 1

    def error(self, message: str) -> ValueError:
        return ValueError(f"{self.path}, line {self.line()}: {message}")

    def peek(self, offset: int = 0):
        i = self.pos + offset
        return self.items[i] if i < len(self.items) else ("end", None, self.line())

    def next(self, what: str):
        if self.pos >= len(self.items):
            raise self.error(f"the file ends where {what} was expected.")
        item = self.items[self.pos]
        self.pos += 1
        return item

    def expect(self, kind: str, value: str | None = None, what: str = ""):
        k, v, _ = self.next(what or repr(value))
        if k != kind or (value is not None and v != value):
            self.pos -= 1
            raise self.error(f"expected {what or repr(value)}, found {v!r}.")
        return v

    def string(self, what: str) -> str:
        return self.expect("str", what=f"a quoted string ({what})")

    def number(self, what: str) -> Fraction:
        k, v, _ = self.next(what)
        if k == "word":
            try:
                x = Fraction(v)
            except (ValueError, ZeroDivisionError):
                pass
            else:
                if abs(x) <= _FLOAT_MAX:
                    return x
                self.pos -= 1
                raise self.error(f"the number {v[:20]!r} ({what}) is too large for a float64.")
        self.pos -= 1
        raise self.error(f"expected a number ({what}), found {v!r}.")

    def remaining(self) -> int:
        return len(self.items) - self.pos

    def integer(self, what: str, minimum: int = 0) -> int:
        x = self.number(what)
        if x.denominator != 1 or x < minimum:
            self.pos -= 1
            raise self.error(f"expected an integer >= {minimum} ({what}), found {self.peek()[1]!r}.")
        return int(x)

    def at(self, kind: str, value: str | None = None, offset: int = 0) -> bool:
        k, v, _ = self.peek(offset)
        return k == kind and (value is None or v == value)

    def strings_in_braces(self, what: str) -> list:
        self.expect("sym", "{", what=f"'{{' opening {what}")
        out = []
        while not self.at("sym", "}"):
            out.append(self.string(what))
        self.pos += 1
        return out

    def numbers_in_braces(self, what: str) -> list:
        self.expect("sym", "{", what=f"'{{' opening {what}")
        out = []
        while not self.at("sym", "}"):
            if self.at("sym", ","):
                self.pos += 1
                continue
            out.append(self.number(what))
        self.pos += 1
        return out


def _read_text(path) -> tuple:
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} is not a file; give the path of a Gambit .nfg or .efg file.")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(f"path {str(path)!r} is {size} bytes, above games.gambit.MAX_FILE_BYTES = {MAX_FILE_BYTES}.")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return path, text


def read_gambit(path, name: str | None = None):
    """Read a Gambit ``.nfg`` or ``.efg`` file.

    Parameters
    ----------
    path : str or Path
        The file; its first word (``NFG`` or ``EFG``) says which format it is.
    name : str, optional
        For an ``.efg``: the short name of the :class:`games.SequentialGame`
        (default ``"gambit_" + the file's stem``), which
        ``game.register()`` registers it under.

    Returns
    -------
    NormalFormGame or SequentialGame
        An ``.nfg`` gives a :class:`games.NormalFormGame` with the file's player
        and strategy names and its title as ``name``. An ``.efg`` gives an
        instance of a new :class:`games.SequentialGame` subclass (its
        ``.to_pyspiel()`` is a ``pyspiel.Game``; ``.tree`` is the parsed
        :class:`GambitTree`). It is not registered: ``type(game).register()``
        makes it load by name (``PSRO("gambit_kuhn")``); worker processes that
        rebuild games by name need the same call in them.

    Raises
    ------
    ValueError
        For a file that is not a well-formed Gambit game, naming the line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "pd.nfg"
    >>> _ = f.write_text('NFG 1 R "PD" { "Row" "Column" } { 2 2 }\\n\\n3 3 5 0 0 5 1 1\\n')
    >>> g = read_gambit(f)
    >>> g.payoffs[0].tolist(), g.payoffs[1].tolist()
    ([[3.0, 0.0], [5.0, 1.0]], [[3.0, 5.0], [0.0, 1.0]])
    """
    path, text = _read_text(path)
    tokens = _Tokens(text, str(path))
    head = tokens.peek()
    if head[:2] == ("word", "NFG"):
        return _parse_nfg(tokens)
    if head[:2] == ("word", "EFG"):
        return _parse_efg(tokens, name or _default_name(path))
    raise ValueError(f"{path}, line {head[2]}: a Gambit file starts with NFG or EFG; found {head[1]!r}.")


def _default_name(path: Path) -> str:
    stem = re.sub(r"\W+", "_", path.stem).strip("_").lower() or "game"
    return "gambit_" + stem


def _header(tokens: _Tokens, magic: str, version: str) -> tuple:
    tokens.expect("word", magic)
    found = tokens.expect("word", what=f"the format version {version}")
    if found != version:
        tokens.pos -= 1
        raise tokens.error(f"expected {magic} version {version}, found {found!r}.")
    kind = tokens.expect("word", what="'R' or 'D' (the number type)")
    if kind not in ("R", "D"):
        tokens.pos -= 1
        raise tokens.error(f"expected 'R' or 'D' after the version, found {kind!r}.")
    title = tokens.string("the title")
    players = tokens.strings_in_braces("the player names")
    if not players:
        raise tokens.error("the game has no players.")
    return title, players


def _parse_nfg(tokens: _Tokens) -> NormalFormGame:
    title, players = _header(tokens, "NFG", "1")
    n = len(players)
    tokens.expect("sym", "{", what="'{' opening the strategies")
    if tokens.at("sym", "{"):
        strategies = []
        while tokens.at("sym", "{"):
            names = tokens.strings_in_braces("a player's strategy names")
            if not names:
                raise tokens.error("a player has no strategies.")
            strategies.append(names)
        tokens.expect("sym", "}", what="'}' closing the strategies")
        shape = [len(s) for s in strategies]
    else:
        shape = []
        while not tokens.at("sym", "}"):
            shape.append(tokens.integer("a number of strategies", minimum=1))
            if math.prod(shape) > tokens.remaining():
                raise tokens.error(f"{math.prod(shape)} strategy profiles, more than the numbers in the file.")
        tokens.pos += 1
        strategies = [[str(i + 1) for i in range(k)] for k in shape]
    if len(shape) != n:
        raise tokens.error(f"{n} players but strategies for {len(shape)}.")
    if tokens.at("str"):
        tokens.pos += 1   # the comment
    num_profiles = int(np.prod(shape))
    if tokens.at("sym", "{"):   # outcome version
        tokens.pos += 1
        outcomes = [np.zeros(n)]
        while tokens.at("sym", "{"):
            line = tokens.peek()[2]
            tokens.pos += 1
            tokens.string("an outcome name")
            values = []
            while not tokens.at("sym", "}"):
                if tokens.at("sym", ","):
                    tokens.pos += 1
                    continue
                values.append(tokens.number("an outcome payoff"))
            tokens.pos += 1
            if len(values) != n:
                raise ValueError(f"{tokens.path}, line {line}: an outcome needs {n} payoffs, one per player; "
                                 f"it has {len(values)}.")
            outcomes.append(np.array([float(v) for v in values]))
        tokens.expect("sym", "}", what="'}' closing the outcome list")
        index = [tokens.integer("an outcome number") for _ in range(num_profiles)]
        if max(index, default=0) >= len(outcomes):
            raise tokens.error(f"outcome number {max(index)} is not defined (there are {len(outcomes) - 1}).")
        flat = np.stack([outcomes[i] for i in index])
    else:
        flat = np.array([float(tokens.number("a payoff")) for _ in range(num_profiles * n)]).reshape(num_profiles, n)
    if tokens.peek()[0] != "end":
        raise tokens.error(f"unexpected {tokens.peek()[1]!r} after the {num_profiles} profiles' payoffs.")
    # The first player's strategy changes fastest: Fortran order over the profile axes.
    payoffs = np.moveaxis(flat.reshape(*shape[::-1], n), -1, 0).transpose(0, *range(n, 0, -1))
    return NormalFormGame(payoffs, player_names=players, strategy_names=strategies, name=title)


@dataclass(frozen=True, eq=False)
class GambitTree:
    """The nodes of an ``.efg`` file, in prefix order (node 0 is the root).

    Attributes
    ----------
    title : str
    players : tuple of str
    kind : tuple of str
        ``"c"`` (chance), ``"p"`` (a player) or ``"t"`` (terminal) per node.
    player : tuple of int
        The acting player (0-based) at ``"p"`` nodes, else -1.
    infoset : tuple of int
        The file's information-set number at ``"c"`` and ``"p"`` nodes, else 0.
    children : tuple of tuple of int
    actions : tuple of tuple of str
        The action names at each node (chance outcomes included).
    chance_probs : tuple of tuple of float
        At chance nodes, the probability of each child.
    infoset_names : dict
        ``(player, infoset) -> name`` (player -1 is chance).
    returns : ndarray, shape (num_nodes, num_players)
        At terminal nodes, the sum of the outcomes on the path; zero elsewhere.
    """

    title: str
    players: tuple
    kind: tuple
    player: tuple
    infoset: tuple
    children: tuple
    actions: tuple
    chance_probs: tuple
    infoset_names: dict
    returns: np.ndarray


def _parse_efg(tokens: _Tokens, name: str) -> SequentialGame:
    title, players = _header(tokens, "EFG", "2")
    n = len(players)
    if tokens.at("str"):
        tokens.pos += 1   # the comment
    kind, player, infoset, children, actions, probs, lines = [], [], [], [], [], [], []
    node_outcome = []
    infosets: dict = {}   # (player, number) -> (action names, chance probabilities)
    infoset_names: dict = {}
    outcomes: dict = {0: np.zeros(n)}
    # Prefix order: a stack of the parents still waiting for children.
    pending = []   # [node, children still to read]
    while tokens.peek()[0] != "end":
        k, word, line = tokens.next("a node")
        if k != "word" or word not in ("c", "p", "t"):
            tokens.pos -= 1
            raise tokens.error(f"expected a node ('c', 'p' or 't'), found {word!r}.")
        if kind and not pending:
            tokens.pos -= 1
            raise tokens.error("a node after the tree is complete (too many nodes for the actions above).")
        node = len(kind)
        tokens.string("a node name")
        acting, number, names, chance = -1, 0, (), ()
        if word in ("c", "p"):
            acting, number, names, chance = _read_infoset(tokens, word, n, line, infosets, infoset_names)
        kind.append(word)
        player.append(acting)
        infoset.append(number)
        actions.append(names)
        probs.append(chance)
        children.append([])
        lines.append(line)
        node_outcome.append(_read_outcome(tokens, n, outcomes))
        if pending:
            parent = pending[-1]
            children[parent[0]].append(node)
            parent[1] -= 1
            if parent[1] == 0:
                pending.pop()
        if word != "t":
            pending.append([node, len(names)])
    if not kind:
        raise tokens.error("the file has no nodes.")
    if pending:
        raise tokens.error(f"the file ends with {pending[-1][1]} child node(s) missing below the node of line "
                           f"{lines[pending[-1][0]]}.")
    returns = _terminal_returns(kind, children, [outcomes[o] for o in node_outcome], n)
    tree = GambitTree(title=title, players=tuple(players), kind=tuple(kind), player=tuple(player),
                      infoset=tuple(infoset), children=tuple(tuple(c) for c in children),
                      actions=tuple(actions), chance_probs=tuple(probs), infoset_names=infoset_names,
                      returns=returns)
    return _sequential_game(tree, name)


def _read_outcome(tokens: _Tokens, n: int, outcomes: dict) -> int:
    """A node's outcome number; its payoffs, where given here, are checked and recorded in ``outcomes``."""
    number = tokens.integer("an outcome number")
    if tokens.at("str"):
        line = tokens.peek()[2]
        tokens.pos += 1
        values = tokens.numbers_in_braces("the outcome's payoffs")
        if len(values) != n:
            raise ValueError(f"{tokens.path}, line {line}: outcome {number} needs {n} payoffs, one per "
                             f"player; it has {len(values)}.")
        payoff = np.array([float(v) for v in values])
        if number in outcomes and number != 0 and not np.array_equal(outcomes[number], payoff):
            raise ValueError(f"{tokens.path}, line {line}: outcome {number} is defined twice, differently.")
        if number == 0 and np.any(payoff):
            raise ValueError(f"{tokens.path}, line {line}: outcome 0 is the null outcome and has no payoffs.")
        outcomes[number] = payoff
    elif number not in outcomes:
        raise tokens.error(f"outcome {number} is used before its payoffs are given.")
    return number


def _read_infoset(tokens: _Tokens, word: str, n: int, line: int, infosets: dict, infoset_names: dict) -> tuple:
    """``(acting player, information set number, action names, chance probabilities)`` of a chance (``c``) or
    player (``p``) node; an information set's actions are given at its first node and must agree at the others."""
    acting = -1
    if word == "p":
        acting = tokens.integer("the player number", minimum=1) - 1
        if acting >= n:
            tokens.pos -= 1
            raise tokens.error(f"player {acting + 1} does not exist; the game has {n} players.")
    number = tokens.integer("an information set number", minimum=1)
    key = (acting, number)
    if tokens.at("str"):
        infoset_names[key] = tokens.next("")[1]
    if not tokens.at("sym", "{"):
        if key not in infosets:
            raise ValueError(f"{tokens.path}, line {line}: information set {number} appears for the first "
                             "time without its actions.")
        return (acting, number, *infosets[key])
    if word == "c":
        names, chance = _read_chance_actions(tokens, line)
    else:
        names, chance = tuple(tokens.strings_in_braces("the action names")), ()
    if not names:
        raise ValueError(f"{tokens.path}, line {line}: information set {number} has no actions.")
    if key in infosets and infosets[key] != (names, chance):
        raise ValueError(f"{tokens.path}, line {line}: information set {number} of "
                         f"{'chance' if acting < 0 else f'player {acting + 1}'} is given different "
                         "actions at two of its nodes.")
    infosets[key] = (names, chance)
    return acting, number, names, chance


def _read_chance_actions(tokens: _Tokens, line: int) -> tuple:
    """``(names, probabilities)`` of a chance node's ``{ "name" p ... }``; the probabilities must sum to 1."""
    tokens.pos += 1
    pairs = []
    while not tokens.at("sym", "}"):
        label = tokens.string("a chance action name")
        pairs.append((label, tokens.number("a chance probability")))
    tokens.pos += 1
    exact = [p[1] for p in pairs]
    if any(p < 0 for p in exact) or abs(float(sum(exact)) - 1.0) > 1e-9:
        raise ValueError(f"{tokens.path}, line {line}: chance probabilities must be >= 0 and "
                         f"sum to 1; got {[str(p) for p in exact]}.")
    return tuple(p[0] for p in pairs), tuple(float(p) for p in exact)


def _terminal_returns(kind: list, children: list, payoffs: list, n: int) -> np.ndarray:
    """Returns at terminals: the outcomes on the path add up (prefix order: parents come first); 0 elsewhere."""
    total = np.zeros((len(kind), n))
    for node in range(len(kind)):
        total[node] += payoffs[node]
        for child in children[node]:
            total[child] = total[node]
    return np.where(np.array([k == "t" for k in kind])[:, None], total, 0.0)


def _sequential_game(tree: GambitTree, name: str) -> SequentialGame:
    """A :class:`SequentialGame` subclass playing ``tree`` (a state is a node index)."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        raise ValueError(f"name must be a short identifier such as 'gambit_kuhn'; got {name!r}.")
    n = len(tree.players)
    kinds = np.array(tree.kind)
    terminal = kinds == "t"
    # Each player's own (infoset, action) path to every node: their information when not acting.
    own = [[()] * len(tree.kind) for _ in range(n)]
    decisions = [0] * len(tree.kind)
    for node, kids in enumerate(tree.children):
        for a, child in enumerate(kids):
            for p in range(n):
                own[p][child] = own[p][node]
            decisions[child] = decisions[node]
            if tree.kind[node] == "p":
                p = tree.player[node]
                own[p][child] = own[p][node] + ((tree.infoset[node], a),)
                decisions[child] += 1
    term_returns = tree.returns[terminal]
    sums = term_returns.sum(axis=1)
    if np.allclose(sums, 0.0, atol=1e-12):
        utility, utility_sum = "zero_sum", None
    elif np.allclose(sums, sums[0], atol=1e-12):
        utility, utility_sum = "constant_sum", float(sums[0])
    else:
        utility, utility_sum = "general_sum", None
    player_nodes = [i for i, k in enumerate(tree.kind) if k == "p"]
    chance_nodes = [i for i, k in enumerate(tree.kind) if k == "c"]
    if not player_nodes:
        raise ValueError("the .efg file has no player decisions; OpenSpiel games need at least one.")

    def information_state(self, state, p):
        if tree.kind[state] == "p" and tree.player[state] == p:
            return f"player {p} infoset {tree.infoset[state]}"
        return f"player {p} after {list(own[p][state])}"

    attrs = {
        "name": name,
        "long_name": tree.title or name,
        "num_players": n,
        "num_distinct_actions": max(len(tree.actions[i]) for i in player_nodes),
        "max_chance_outcomes": max((len(tree.actions[i]) for i in chance_nodes), default=0),
        "max_game_length": max(1, max(decisions)),
        "min_utility": float(term_returns.min()),
        "max_utility": float(term_returns.max()),
        "utility": utility,
        "utility_sum": utility_sum,
        "perfect_information": len({(tree.player[i], tree.infoset[i]) for i in player_nodes}) == len(player_nodes),
        "tree": tree,
        "initial_state": lambda self: 0,
        "current_player": lambda self, s: (TERMINAL if tree.kind[s] == "t" else CHANCE if tree.kind[s] == "c"
                                           else tree.player[s]),
        "legal_actions": lambda self, s: list(range(len(tree.children[s]))),
        "chance_outcomes": lambda self, s: list(enumerate(tree.chance_probs[s])),
        "apply_action": lambda self, s, a: tree.children[s][a],
        "returns": lambda self, s: tree.returns[s].tolist(),
        "information_state": information_state,
        "action_to_string": lambda self, s, p, a: tree.actions[s][a],
        "state_to_string": lambda self, s: f"node {s}",
        "__doc__": f"The Gambit game {tree.title!r} ({len(tree.kind)} nodes), read by games.read_gambit.",
        "__module__": __name__,
    }
    cls = type(f"Gambit_{name}", (SequentialGame,), attrs)
    return cls()


# ----------------------------------------------------------------- writing
def _number(x: float) -> str:
    """An exact Gambit number for a float: an integer, a short decimal or a rational ``p/q``."""
    x = float(x)
    if not np.isfinite(x):
        raise ValueError(f"Gambit files hold finite numbers only; got {x}.")
    if x == int(x) and abs(x) < 2**53:
        return str(int(x))
    text = repr(x)
    if "e" not in text and Fraction(text) == Fraction(x):
        return text
    f = Fraction(x)
    return f"{f.numerator}/{f.denominator}"


def _quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_gambit(game, path, version: str = "payoff") -> Path:
    """Write a game as a Gambit file: a normal-form game as ``.nfg``, a sequential one as ``.efg``.

    Parameters
    ----------
    game : NormalFormGame, SequentialGame or pyspiel.Game
        A normal-form game, or a sequential game with explicit chance (its
        whole tree is written, so keep it small).
    path : str or Path
    version : {"payoff", "outcome"}
        For ``.nfg``: the payoff version (payoffs listed per profile) or the
        outcome version (one outcome per profile).

    Returns
    -------
    Path
        ``path``. Numbers are written exactly (integers, short decimals or
        rationals ``p/q``), so :func:`read_gambit` gives back the same floats.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from games import catalog
    >>> f = write_gambit(catalog.matching_pennies(), pathlib.Path(tempfile.mkdtemp()) / "mp.nfg")
    >>> print(f.read_text().splitlines()[0])
    NFG 1 R "matching_pennies" { "row" "col" } { { "heads" "tails" } { "heads" "tails" } }
    >>> bool((read_gambit(f).payoffs == catalog.matching_pennies().payoffs).all())
    True
    """
    path = Path(path)
    if isinstance(game, NormalFormGame):
        text = _nfg_text(game, version)
    else:
        if version != "payoff":
            raise ValueError("version applies to .nfg files only; leave it out for a sequential game.")
        if isinstance(game, SequentialGame):
            game = game.to_pyspiel()
        if not hasattr(game, "new_initial_state"):
            raise TypeError(f"game must be a NormalFormGame, a SequentialGame or a pyspiel.Game; got "
                            f"{type(game).__name__}.")
        text = _efg_text(game)
    path.write_text(text)
    return path


def _nfg_text(game: NormalFormGame, version: str) -> str:
    players = " ".join(_quote(p) for p in game.player_names)
    strategies = " ".join("{ " + " ".join(_quote(s) for s in names) + " }" for names in game.strategy_names)
    lines = [f"NFG 1 R {_quote(game.name)} {{ {players} }} {{ {strategies} }}", '""', ""]
    # profiles with the first player's strategy changing fastest
    flat = np.moveaxis(game.payoffs, 0, -1).transpose(*range(game.num_players - 1, -1, -1), game.num_players)
    flat = flat.reshape(-1, game.num_players)
    if version == "payoff":
        lines.append(" ".join(" ".join(_number(v) for v in row) for row in flat))
    elif version == "outcome":
        lines.append("{")
        lines += ["{ " + _quote("") + " " + ", ".join(_number(v) for v in row) + " }" for row in flat]
        lines.append("}")
        lines.append(" ".join(str(i + 1) for i in range(flat.shape[0])))
    else:
        raise ValueError(f"version must be 'payoff' or 'outcome'; got {version!r}.")
    return "\n".join(lines) + "\n"


def _efg_text(game) -> str:
    import pyspiel

    if game.get_type().dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"game {game} has simultaneous moves; write pyspiel.convert_to_turn_based(game) instead.")
    n = game.num_players()
    players = " ".join(_quote(f"Player {p + 1}") for p in range(n))
    lines = [f"EFG 2 R {_quote(str(game))} {{ {players} }}", '""', ""]
    infosets = [dict() for _ in range(n)]
    counters = {"chance": 0, "outcome": 0}
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            counters["outcome"] += 1
            payoff = " ".join(_number(v) for v in state.returns())
            lines.append(f't "" {counters["outcome"]} "" {{ {payoff} }}')
            continue
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            counters["chance"] += 1
            body = " ".join(f"{_quote(state.action_to_string(pyspiel.PlayerId.CHANCE, a))} {_number(p)}"
                            for a, p in outcomes)
            lines.append(f'c "" {counters["chance"]} "" {{ {body} }} 0')
            actions = [a for a, _ in outcomes]
        else:
            p = state.current_player()
            key = state.information_state_string(p)
            number = infosets[p].setdefault(key, len(infosets[p]) + 1)
            actions = state.legal_actions()
            names = " ".join(_quote(state.action_to_string(p, a)) for a in actions)
            lines.append(f'p "" {p + 1} {number} {_quote(key)} {{ {names} }} 0')
        stack.extend(state.child(a) for a in reversed(actions))
    return "\n".join(lines) + "\n"
