from player import MIN_VOLUME, Player, clamp


def test_below_the_range():
    assert clamp(-5, 0, 100) == 0
    player = Player()
    player.set_volume(-3)
    assert player.volume == MIN_VOLUME


def test_quieter_never_goes_below_zero():
    player = Player(volume=0)
    player.quieter()
    assert player.volume == 0


def test_mute():
    player = Player()
    player.toggle_mute()
    assert player.muted
    player.toggle_mute()
    assert not player.muted
