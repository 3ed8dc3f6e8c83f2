from player import Player, clamp


def test_inside_the_range():
    assert clamp(50, 0, 100) == 50
    player = Player()
    assert player.volume == 30
    player.set_volume(50)
    assert player.volume == 50


def test_above_the_range():
    assert clamp(150, 0, 100) == 100
    player = Player(volume=95)
    player.louder()
    assert player.volume == 100


def test_steps():
    player = Player(volume=40)
    player.louder(15)
    player.quieter(5)
    assert player.volume == 50
