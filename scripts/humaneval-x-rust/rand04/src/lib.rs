//! rand 0.4's `Rng` as HumanEval-X's Rust tests use it (`rand::thread_rng()`, `rng.gen()`,
//! `rng.gen_range(low, high)`), delegating to rand 0.8.

use rand08::distributions::uniform::SampleUniform;
use rand08::distributions::{Distribution, Standard};
use rand08::seq::SliceRandom;

pub use rand08::rngs::ThreadRng;
pub use rand08::{random, thread_rng, RngCore};

/// The methods of rand 0.4's `Rng` trait.
pub trait Rng: RngCore {
    /// A random value of a type with a standard distribution.
    fn gen<T>(&mut self) -> T
    where
        Standard: Distribution<T>,
    {
        rand08::Rng::gen(self)
    }

    /// A value in `[low, high)`; panics when `low >= high`, as 0.4 does.
    fn gen_range<T: SampleUniform + PartialOrd>(&mut self, low: T, high: T) -> T {
        rand08::Rng::gen_range(self, low..high)
    }

    /// `true` with probability 1 in `n` (always for `n <= 1`).
    fn gen_weighted_bool(&mut self, n: u32) -> bool {
        n <= 1 || rand08::Rng::gen_range(self, 0..n) == 0
    }

    /// A random element of `values`, None when it is empty.
    fn choose<'a, T>(&mut self, values: &'a [T]) -> Option<&'a T> {
        values.choose(self)
    }

    /// Shuffles `values` in place.
    fn shuffle<T>(&mut self, values: &mut [T]) {
        values.shuffle(self)
    }
}

impl<R: RngCore + ?Sized> Rng for R {}
