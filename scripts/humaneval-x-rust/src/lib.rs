// Nothing of its own: this crate exists so that cargo builds its dependencies.
