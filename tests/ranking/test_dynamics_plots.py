"""Phase portraits: what is drawn (arrows, trajectories, one marker per rest point), the backend left alone."""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from games import catalog
from ranking.dynamics_plots import plot_simplex_portrait, plot_square_portrait, to_triangle


def markers(ax):
    """Rest-point markers: the scatter collections, with their face colours."""
    return [c for c in ax.collections if c.get_label().endswith("rest point")]


def test_rps_simplex_portrait_marks_its_four_rest_points():
    backend = matplotlib.get_backend()
    fig, ax = plt.subplots()
    out = plot_simplex_portrait(catalog.rock_paper_scissors(), ax=ax, resolution=6, t_max=5,
                                initial_states=[[0.5, 0.3, 0.2]])
    assert out is ax and matplotlib.get_backend() == backend
    found = markers(ax)
    assert len(found) == 4
    centre = [c for c in found if np.allclose(c.get_offsets()[0], to_triangle([1 / 3] * 3)[0])]
    assert len(centre) == 1 and centre[0].get_label() == "neutral rest point"
    assert len(ax.lines) == 2   # the trajectory and the triangle's outline
    plt.close(fig)


def test_square_portrait_of_the_stag_hunt():
    fig, ax = plt.subplots()
    plot_square_portrait(catalog.stag_hunt(), ax=ax, resolution=8, initial_states=[(0.5, 0.9)])
    labels = sorted(c.get_label() for c in markers(ax))
    assert labels == ["stable rest point"] * 2 + ["unstable rest point"] * 3
    assert ax.get_ylabel() == "P(p1 plays stag)" and len(ax.lines) == 1
    plt.close(fig)


def test_boltzmann_portrait_and_shape_errors():
    fig, ax = plt.subplots()
    plot_simplex_portrait(catalog.rock_paper_scissors(), "boltzmann_q", ax=ax, resolution=5, t_max=3,
                          temperature=0.5)
    assert [c.get_label() for c in markers(ax)] == ["stable rest point"]
    plt.close(fig)
    with pytest.raises(ValueError, match="3 strategies"):
        plot_simplex_portrait(catalog.stag_hunt())
    with pytest.raises(ValueError, match="2x2"):
        plot_square_portrait(catalog.rock_paper_scissors())
