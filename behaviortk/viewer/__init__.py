"""The arcade viewer: drawing from NumPy state, overlays, inspection panel, hot reload, headless render.

Open a window with ``behaviortk.viewer.app.run_viewer(path, engine=..., seed=...)``;
render headless with ``behaviortk.viewer.render.render(sim, binary_file, ticks, fmt=...)``.
"""
