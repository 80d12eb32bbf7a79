"""What both engines and every leaf share: status codes, the flat tree, leaf-status rules."""
