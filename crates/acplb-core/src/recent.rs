//! A set that remembers only the values put in it last: past its capacity the oldest is
//! forgotten (what a request naming a forgotten value is told is then the plain answer).

use std::borrow::Borrow;
use std::collections::{HashSet, VecDeque};
use std::hash::Hash;

/// The last `capacity` distinct values put in, oldest first.
#[derive(Debug)]
pub(crate) struct Recent<T> {
    capacity: usize,
    order: VecDeque<T>,
    values: HashSet<T>,
}

impl<T: Eq + Hash + Clone> Recent<T> {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            order: VecDeque::new(),
            values: HashSet::new(),
        }
    }

    /// Puts `value` in as the newest (again, if it was there); past the capacity the oldest is
    /// forgotten.
    pub(crate) fn insert(&mut self, value: T) {
        if self.values.contains(&value) {
            self.order.retain(|v| v != &value);
        } else if self.order.len() >= self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            self.values.remove(&oldest);
        }
        self.values.insert(value.clone());
        self.order.push_back(value);
    }

    /// Whether `value` is among the ones remembered.
    pub(crate) fn contains<Q>(&self, value: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.values.contains(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_is_forgotten_past_the_capacity_and_a_value_put_again_is_the_newest() {
        let mut recent = Recent::new(2);
        recent.insert("a".to_owned());
        recent.insert("b".to_owned());
        recent.insert("a".to_owned());
        recent.insert("c".to_owned());
        assert!(recent.contains("a") && recent.contains("c"));
        assert!(!recent.contains("b"), "b was the oldest");
    }
}
