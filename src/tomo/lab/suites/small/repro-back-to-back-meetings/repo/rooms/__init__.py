"""Meeting-room availability. Times are minutes since midnight (540 is 09:00), so no clock is involved."""
