"""Helpers shared by the viz tests (imported by name: the test folder is on sys.path)."""

import numpy as np

from trackdyn.testing import problems as P
from trackdyn.viz import shapes as S

BOB_COLOR = "#ff0000"
LINK_COLOR = "#0000ff"


def pendulum_chain_model(n_links=4):
    """A short chain hung from the origin with a red sphere at its tip: bodies, joints and shapes."""
    m = P.chain(n_links=n_links, mass=1.0, pitch=0.25, inertia=(0.01, 0.01, 0.01))
    for k in range(n_links):
        m.add_visual(f"link[{k}]", S.Box(size=(0.22, 0.06, 0.04), color=LINK_COLOR))
    m.add_visual(f"link[{n_links - 1}]", S.Sphere(radius=0.06, center=(0.125, 0.0, 0.0), color=BOB_COLOR))
    m.add_visual(m.ground, S.Box(size=(0.05, 0.2, 0.05), color="#303030"))
    return m


def tip_position(res, i, n_links=4):
    """World position of the red sphere's centre at sample i."""
    from trackdyn.math.quaternion import quat_to_matrix

    name = f"link[{n_links - 1}]"
    p = np.array([res[f"{name}.pos.{c}"][i] for c in "xyz"])
    q = np.array([res[f"{name}.quat.e{k}"][i] for k in range(4)])
    return p + quat_to_matrix(q) @ np.array([0.125, 0.0, 0.0])


def red_mask(rgb):
    rgb = np.asarray(rgb, int)
    return (rgb[..., 0] > 180) & (rgb[..., 1] < 90) & (rgb[..., 2] < 90)


def drawn_bodies_mask(view, i):
    """Pixels of frame ``i`` that the bodies cover: the frame drawn with and without the bodies, differenced."""
    img = view.draw(i)
    hidden = [a for a in (view.polys, view.lines) if a.get_visible()]
    for a in hidden:
        a.set_visible(False)
    try:
        bare = view.draw(i)
    finally:
        for a in hidden:
            a.set_visible(True)
    return img, np.any(img != bare, axis=-1)


def columns_share(mask):
    """``(first column, last column, share of the frame width)`` of a pixel mask's bounding box."""
    cols = np.nonzero(mask.any(axis=0))[0]
    return int(cols[0]), int(cols[-1]), (cols[-1] - cols[0] + 1) / mask.shape[1]
