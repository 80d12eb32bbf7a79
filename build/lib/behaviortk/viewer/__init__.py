"""The arcade viewer: drawing from NumPy state, overlays, live tree and tuning panels, hot reload,
headless renders.

Open a window with ``behaviortk.viewer.app.run_viewer(path, engine=..., seed=...)``;
render headless with ``behaviortk.viewer.render.render(sim, binary_file, ticks, fmt=...)``.
A recorded tick's tree is drawn by giving ``painter.PanelState(frame=...)`` a
``tree_frame.frame_from_codes(tree, status_codes, forces)``. ``ARCHITECTURE.md``
("Viewer") says which module does what.
"""
